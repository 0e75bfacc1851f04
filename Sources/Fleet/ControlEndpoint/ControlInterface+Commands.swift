import DBus
import FleetControl
import FleetCore

// `org.wearfleet.Daemon1`'s commands: one method per declaration of the command catalogue
// (`CommandCatalogue`; README's table of them is made from it too). Each checks the caller first
// (`ControlAccess`: root or the admin group for an `admin` command; the bus policy checks too),
// then its arguments with the one checker, runs the one runner (`FleetCommandRunner`), and
// answers once the outcome is known. A refusal is a named error (`WearfleetControl.ErrorName`)
// and changes nothing.

extension ControlInterface {
    /// What the command methods need: the fleet to command, who may, and the status to find a
    /// device's identity by its address.
    public struct Commands: Sendable {
        public let fleet: any FleetCommands
        public let access: ControlAccess

        public init(fleet: any FleetCommands, access: ControlAccess) {
            self.fleet = fleet
            self.access = access
        }
    }

    /// The command methods, answering through `commands`.
    static func commandMethods(_ commands: Commands, status: @escaping StatusProvider) -> [DBusMethod] {
        let runner = FleetCommandRunner(fleet: commands.fleet) { address in await status().device(address: address)?.id }
        return CommandCatalogue.all.map { method($0, runner: runner, access: commands.access) }
    }

    /// The declaration's method: authorize, check, run, answer.
    static func method(_ declaration: CommandDeclaration, runner: FleetCommandRunner, access: ControlAccess) -> DBusMethod {
        DBusMethod(declaration.member, inputs: declaration.dbusInputs, outputs: declaration.dbusOutputs, handler: .async { call in
            if declaration.access == .admin { try await access.authorizeCommand(declaration.member, sender: call.sender) }
            let command: CheckedCommand
            do throws(CommandRejection) {
                command = try CommandArgumentChecker.check(declaration, declaration.rawArguments(fromDBus: call.body), on: .dbus)
            } catch {
                throw DBusError(name: error.errorName, message: error.description)
            }
            do throws(FleetCommandRunner.Failure) {
                return declaration.dbusReply(try await runner.run(command))
            } catch {
                throw DBusError(name: error.name, message: error.message)
            }
        })
    }
}
