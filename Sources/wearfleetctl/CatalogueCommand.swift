import DBus
import FleetControl
import Foundation

/// The subcommands that change the fleet, one per declaration of the command catalogue
/// (`CommandCatalogue`): `wearfleetctl <op> …` is parsed from the declaration (positional
/// arguments in order, `--name value` options, `--flag` bools, `--json`, `--bus ADDRESS`,
/// `--help`), checked by the one checker, and run as one D-Bus call, answered once the daemon
/// knows the outcome. Only root and members of group wearfleet-admin may run them.
enum CatalogueCommand {
    /// Runs `declaration` with the words after its op and exits: 0 done, 2 bad usage, else the
    /// `ControlClientError`'s exit code.
    static func run(_ declaration: CommandDeclaration, _ words: [String]) async -> Never {
        let request: CommandLineRequest
        do {
            request = try declaration.parseCommandLine(words)
        } catch {
            fail("""
                wearfleetctl: \(error.commandLineDescription)
                Usage: wearfleetctl \(declaration.commandLineUsage)
                  See 'wearfleetctl \(declaration.op) --help' for more information.
                """, exitCode: ControlClientError.ExitCode.usage)
        }
        switch request {
        case .help:
            print(declaration.commandLineHelp)
            exit(ControlClientError.ExitCode.success)
        case .run(let command, let typed, let json, let bus):
            do {
                let client = try await ControlClient.connect(to: bus.map { .address($0) } ?? .system)
                let outcome: CommandOutcome
                do {
                    outcome = try await client.run(command)
                } catch {
                    await client.close()
                    throw error
                }
                await client.close()
                let result = ControlCommandResult(command, words: typed, outcome: outcome)
                print(json ? try result.json() : result.text)
                exit(ControlClientError.ExitCode.success)
            } catch let error as ControlClientError {
                fail("wearfleetctl: \(error)", exitCode: error.exitCode)
            } catch {
                fail("wearfleetctl: \(error)", exitCode: ControlClientError.ExitCode.failure)
            }
        }
    }

    /// The catalogue's commands for the root help (ArgumentParser wraps the text as it likes, so
    /// the ops are one sentence, not a table).
    static var overview: String {
        CommandCatalogue.all.map(\.op).joined(separator: ", ") + "."
    }

    private static func fail(_ message: String, exitCode: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(exitCode)
    }
}
