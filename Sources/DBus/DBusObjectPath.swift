/// A validated D-Bus object path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
///
/// libdbus aborts the process when handed an invalid path, so every path is checked here first.
public struct DBusObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    /// The root path `/`.
    public static let root = DBusObjectPath(validated: "/")

    /// Validates `rawValue`; throws `DBusValidationError` naming what is wrong.
    public init(_ rawValue: String) throws(DBusValidationError) {
        try DBusValidation.checkObjectPath(rawValue)
        self.rawValue = rawValue
    }

    /// For literals in source code only: an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        do {
            try DBusValidation.checkObjectPath(value)
        } catch {
            preconditionFailure("invalid object path literal: \(error)")
        }
        rawValue = value
    }

    init(validated: String) { rawValue = validated }

    /// Appends one element (`[A-Za-z0-9_]+`) to this path.
    public func appending(_ element: String) throws(DBusValidationError) -> DBusObjectPath {
        try DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The parent path, or nil for `/`.
    public var parent: DBusObjectPath? {
        guard rawValue != "/" else { return nil }
        guard let slash = rawValue.lastIndex(of: "/") else { return nil }
        let prefix = rawValue[..<slash]
        return DBusObjectPath(validated: prefix.isEmpty ? "/" : String(prefix))
    }

    /// The last element (`dev_AA_BB_…`), or "" for `/`.
    public var lastElement: String {
        guard let slash = rawValue.lastIndex(of: "/") else { return rawValue }
        return String(rawValue[rawValue.index(after: slash)...])
    }

    /// True when `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    public var description: String { rawValue }

    public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }
}
