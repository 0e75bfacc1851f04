// Every key and value remembers where it was written, so that a configuration error can point the
// operator at `file:line` long after the text has been parsed and merged with drop-ins.

/// A place in a TOML source: the file name as given to the parser, a 1-based line and a 1-based
/// column counted in Unicode scalars.
public struct TOMLPosition: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`.
    public var description: String { "\(file):\(line):\(column)" }
}
