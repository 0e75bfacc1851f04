import Foundation

/// Where the fidelity test finds the package's build products and its Python environment.
enum FidelityEnvironment {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `bluez-sim` next to the test bundle (same build directory), else in `.build/debug`.
    static var simulatorBinary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bluez-sim")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return packageRoot.appendingPathComponent(".build/debug/bluez-sim").path
    }

    static var python: String? {
        let path = packageRoot.appendingPathComponent(".build-venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// `make test` sets WEARFLEET_REQUIRE_FIDELITY=1: then a missing environment fails the test
    /// instead of skipping it.
    static var shouldRun: Bool { python != nil || ProcessInfo.processInfo.environment["WEARFLEET_REQUIRE_FIDELITY"] == "1" }
}
