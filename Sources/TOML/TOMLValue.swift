// Dates and times are not represented: nothing in the daemon's configuration is a date, and the
// parser reports them as unsupported rather than accepting text it would then ignore.

/// A parsed TOML value.
public enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    /// Both static arrays (`[1, 2]`) and arrays of tables (`[[pinned]]`).
    case array([TOMLNode])
    /// Header tables (`[fleet]`), dotted-key tables and inline tables alike.
    case table(TOMLTable)

    /// "a string", "an integer", …: for messages such as "must be a boolean, found a string".
    public var typeDescription: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// A value and the position of its first character.
public struct TOMLNode: Equatable, Sendable {
    public var value: TOMLValue
    public var position: TOMLPosition

    public init(value: TOMLValue, position: TOMLPosition) {
        self.value = value
        self.position = position
    }
}
