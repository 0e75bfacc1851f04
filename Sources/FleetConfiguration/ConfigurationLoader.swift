// Loading is split in two so that reload can trust it: `read` does the file I/O, and `decode` is a
// pure function of the files' contents that returns either a complete, valid configuration or every
// error it found. A reload that gets errors keeps the running configuration.

import TOML
import FoundationEssentials
import Glibc

/// Reads `wearfleetd.toml` and its drop-ins and turns them into a `WearfleetConfiguration`.
///
/// Order and merging: the main file first, then every `*.toml` in the drop-in directory sorted by
/// file name (byte order; hidden files are skipped). Later files override earlier ones key by key
/// (tables merge, any other value, arrays included, is replaced), except `[[pinned]]`, whose
/// entries accumulate; a later file pinning an address again replaces that one entry.
/// A value that a later file overrides is not validated.
///
/// Missing files: a missing drop-in directory is fine (none). A missing main file is an error
/// unless `missingMainFile` is `.useDefaults` (a development machine has no `/etc/wearfleet`).
/// Syntax errors of every file are reported; semantic checks run only when every file parses,
/// because a section lost to a syntax error would cause misleading follow-on errors.
public enum ConfigurationLoader {
    public static let defaultMainFile = "/etc/wearfleet/wearfleetd.toml"
    public static let defaultDropInDirectory = "/etc/wearfleet/wearfleetd.d"

    /// What a missing main file means.
    public enum MissingMainFile: Sendable {
        case error
        case useDefaults
    }

    /// The drop-in directory that goes with a main file: `x/wearfleetd.toml` → `x/wearfleetd.d`.
    public static func dropInDirectory(forMainFile path: String) -> String {
        let stem = path.hasSuffix(".toml") ? String(path.dropLast(5)) : path
        return stem + ".d"
    }

    /// Reads and decodes the configuration; `dropInDirectory: nil` means no drop-ins.
    public static func load(
        mainFile: String,
        dropInDirectory: String?,
        missingMainFile: MissingMainFile = .error
    ) -> Result<WearfleetConfiguration, ConfigurationErrors> {
        switch read(mainFile: mainFile, dropInDirectory: dropInDirectory, missingMainFile: missingMainFile) {
        case .success(let sources): decode(sources)
        case .failure(let errors): .failure(errors)
        }
    }

    /// The files' contents in the order they apply, or every file that could not be read.
    public static func read(
        mainFile: String,
        dropInDirectory: String?,
        missingMainFile: MissingMainFile = .error
    ) -> Result<[ConfigurationSource], ConfigurationErrors> {
        var sources: [ConfigurationSource] = []
        var errors: [ConfigurationError] = []
        let files = FileManager.default
        if PathKind(of: mainFile) != .missing || missingMainFile == .error {
            switch readFile(mainFile) {
            case .success(let source): sources.append(source)
            case .failure(let fileErrors): errors += fileErrors.errors
            }
        }
        if let dropInDirectory, case let kind = PathKind(of: dropInDirectory), kind != .missing {
            if kind != .directory {
                errors.append(ConfigurationError(file: dropInDirectory, message: "is not a directory"))
            } else if let names = try? files.contentsOfDirectory(atPath: dropInDirectory) {
                let dropIns = names
                    .filter { $0.hasSuffix(".toml") && !$0.hasPrefix(".") }
                    .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                for name in dropIns {
                    let path = dropInDirectory.hasSuffix("/") ? dropInDirectory + name : dropInDirectory + "/" + name
                    switch readFile(path) {
                    case .success(let source): sources.append(source)
                    case .failure(let fileErrors): errors += fileErrors.errors
                    }
                }
            } else {
                errors.append(ConfigurationError(file: dropInDirectory, message: "cannot list the drop-in directory (permission denied?)"))
            }
        }
        return errors.isEmpty ? .success(sources) : .failure(ConfigurationErrors(errors))
    }

    /// One file's text, or what keeps it from being read: the file itself (missing, a
    /// directory, unreadable) or each invalid UTF-8 sequence and NUL byte, at `file:line:column`.
    static func readFile(_ path: String) -> Result<ConfigurationSource, ConfigurationErrors> {
        let kind = PathKind(of: path)
        guard kind != .missing else {
            return .failure(ConfigurationErrors([ConfigurationError(file: path, message: "cannot read the configuration: no such file")]))
        }
        guard kind != .directory else {
            return .failure(ConfigurationErrors([ConfigurationError(file: path, message: "cannot read the configuration: it is a directory")]))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(ConfigurationErrors([ConfigurationError(file: path, message: "cannot read the configuration (permission denied?)")]))
        }
        return source(file: path, bytes: Array(data))
    }

    /// Pure: the text of a file's bytes, or every invalid UTF-8 sequence and NUL byte in them.
    static func source(file: String, bytes: [UInt8]) -> Result<ConfigurationSource, ConfigurationErrors> {
        let problems = TOMLEncodingCheck.problems(in: bytes, file: file)
        guard problems.isEmpty, let text = String(validating: bytes, as: UTF8.self) else {
            let errors = problems.map(ConfigurationError.init)
            return .failure(ConfigurationErrors(errors.isEmpty ? [ConfigurationError(file: file, message: "is not valid UTF-8")] : errors))
        }
        return .success(ConfigurationSource(file: file, text: text))
    }

    /// Pure: parses, merges and validates `sources` (in the order they apply).
    public static func decode(_ sources: [ConfigurationSource]) -> Result<WearfleetConfiguration, ConfigurationErrors> {
        var documents: [TOMLTable] = []
        var syntaxErrors: [ConfigurationError] = []
        for source in sources {
            do {
                documents.append(try TOMLParser.parse(source.text, file: source.file))
            } catch {
                syntaxErrors.append(ConfigurationError(error))
            }
        }
        guard syntaxErrors.isEmpty else { return .failure(ConfigurationErrors(syntaxErrors)) }
        let start = TOMLPosition(file: sources.first?.file ?? "", line: 1, column: 1)
        let merged = documents.reduce(TOMLTable(position: start)) { $0.merged(with: $1, accumulating: ["pinned"]) }
        var decoder = ConfigurationDecoder()
        var configuration = decoder.decode(merged)
        configuration.sources = sources.map(\.file)
        guard decoder.errors.isEmpty else {
            let order = Dictionary(sources.enumerated().map { ($1.file, $0) }, uniquingKeysWith: { first, _ in first })
            let sorted = decoder.errors.enumerated().sorted { lhs, rhs in
                let left = (order[lhs.element.file] ?? .max, lhs.element.line ?? 0, lhs.offset)
                let right = (order[rhs.element.file] ?? .max, rhs.element.line ?? 0, rhs.offset)
                return left < right
            }
            return .failure(ConfigurationErrors(sorted.map(\.element)))
        }
        return .success(configuration)
    }
}
