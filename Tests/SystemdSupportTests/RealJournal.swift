import Foundation
import TestSupport

/// Reads entries back from the machine's journald, when there is one.
enum RealJournal {
    static let socketPath = "/run/systemd/journal/socket"
    static let journalctl = "/usr/bin/journalctl"

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: socketPath) && FileManager.default.isExecutableFile(atPath: journalctl)
    }

    /// The entry whose `TEST_MARKER` is `marker`, as `journalctl -o json --all` shows it (without
    /// `--all`, fields over 4 KiB come back as null). journald receives asynchronously, so this
    /// asks again (`--sync` flushes first) until the entry appears or the timeout passes.
    static func entry(marker: String) async throws -> [String: Any] {
        let json = try await withTimeout(.seconds(10), "the entry in the journal") {
            while true {
                let output = try run(["--sync"]) + run(["-o", "json", "--all", "--no-pager", "TEST_MARKER=\(marker)"])
                if let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }) { return String(line) }
                try await Task.sleep(for: .milliseconds(50))  // polling the journal, not synchronizing with our code
            }
        }
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        return object as? [String: Any] ?? [:]
    }

    private static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: journalctl)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
