import Foundation
import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

/// Decodes `text` as the only configuration file, named `main.toml`.
func decodeConfiguration(_ text: String, file: String = "main.toml") -> Result<WearfleetConfiguration, ConfigurationErrors> {
    ConfigurationLoader.decode([ConfigurationSource(file: file, text: text)])
}

/// The configuration in `text`, recording an issue if it is invalid.
func validConfiguration(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> WearfleetConfiguration? {
    switch decodeConfiguration(text) {
    case .success(let configuration):
        return configuration
    case .failure(let errors):
        Issue.record("unexpected errors:\n\(errors)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The error lines for `text` (empty when valid).
func configurationErrors(_ text: String) -> [String] {
    switch decodeConfiguration(text) {
    case .success: []
    case .failure(let errors): errors.errors.map(\.description)
    }
}

/// The syntax error for `text` as `file:line:column: message`, or nil when it parses.
func syntaxError(_ text: String) -> String? {
    do {
        _ = try TOMLParser.parse(text, file: "t.toml")
        return nil
    } catch {
        return error.description
    }
}

/// A fresh directory under the system's temporary directory, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-config-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The repository's root, found from this file's place in it.
var repositoryRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
