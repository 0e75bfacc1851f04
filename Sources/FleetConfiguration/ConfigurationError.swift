import TOML

/// One thing wrong with the configuration, located at the key or value that is wrong.
///
/// `description` is `file:line: message` (syntax errors, invalid UTF-8 and NUL bytes add the
/// column: `file:line:column:`), or `file: message` when the problem is the file itself
/// (missing, unreadable).
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// A semantic error at a key or value: `file:line: message`.
    public init(at position: TOMLPosition, _ message: String) {
        self.init(file: position.file, line: position.line, message: message)
    }

    /// A syntax error: `file:line:column: message`.
    public init(_ syntax: TOMLSyntaxError) {
        self.init(file: syntax.position.file, line: syntax.position.line, column: syntax.position.column, message: syntax.message)
    }

    public var description: String {
        switch (line, column) {
        case (let line?, let column?): "\(file):\(line):\(column): \(message)"
        case (let line?, nil): "\(file):\(line): \(message)"
        default: "\(file): \(message)"
        }
    }
}

/// Every error found in a configuration, in file order (main file, then drop-ins by name) and
/// by line within a file. Never empty when thrown or returned as a failure.
public struct ConfigurationErrors: Error, Hashable, Sendable, CustomStringConvertible {
    public var errors: [ConfigurationError]

    public init(_ errors: [ConfigurationError]) {
        self.errors = errors
    }

    /// One error per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
