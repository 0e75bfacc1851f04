import Foundation
import Testing
import TestSupport

/// The daemon's command line, run as users run it.
@Suite("wearfleetd --check-config")
struct WearfleetdCommandTests {
    /// The binary sits next to the test bundle in the build directory.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("wearfleetd").path
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test func theExampleConfigurationIsValid() throws {
        let example = Self.packageRoot.appendingPathComponent("config/wearfleetd.toml").path
        let result = try ChildProcess.run(Self.binary, ["--check-config", "--config", example])
        #expect(result.status == 0)
        #expect(result.output.contains("OK"))
    }

    @Test func errorsAreReportedAsFileLineAndExit78() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleetd-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("wearfleetd.toml")
        try "[fleet]\nmax_conections = 3\n\n[[pinned]]\naddress = \"zz\"\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try ChildProcess.run(Self.binary, ["--check-config", "--config", file.path])
        #expect(result.status == 78)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("\(file.path):2: unknown key 'max_conections'") == true)
        #expect(lines.last?.hasPrefix("\(file.path):5: 'address' in [[pinned]]") == true)
    }
}
