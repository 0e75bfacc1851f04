import Foundation
import TestSupport

/// Runs the project's executables as users run them.
enum Commands {
    /// The build directory: binaries sit next to the test bundle.
    static var buildDirectory: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
    static var wearfleetctl: String { buildDirectory.appendingPathComponent("wearfleetctl").path }
    static var wearfleetd: String { buildDirectory.appendingPathComponent("wearfleetd").path }

    struct Result: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `command` (executable first) to completion; see `run(_:_:timeout:)`.
    static func run(_ command: [String], timeout: Duration = .seconds(30)) async throws -> Result {
        try await run(command[0], Array(command.dropFirst()), timeout: timeout)
    }

    /// Runs `executable` to completion on a thread of its own, not on the Swift concurrency pool:
    /// an in-process D-Bus service under test answers on that pool, and a blocked pool thread
    /// would starve it on a 2-core machine.
    static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-cmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stderrPath = directory.appendingPathComponent("stderr").path
        let child = try ChildProcess(executable, arguments, stderrPath: stderrPath)
        let (output, status) = try await withTimeout(timeout, "\(child.name) to finish") {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<(String, Int32), Never>) in
                    Thread.detachNewThread {
                        var lines: [String] = []
                        while let line = child.readLine() { lines.append(line) }
                        continuation.resume(returning: (lines.joined(separator: "\n"), child.waitForExit()))
                    }
                }
            } onCancel: {
                // The reading thread then sees the end of the output.
                child.signal(SIGKILL)
            }
        }
        let errors = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return Result(status: status, output: output, errors: errors.trimmingCharacters(in: .newlines))
    }
}
