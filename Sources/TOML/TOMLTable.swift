/// A TOML table: its keys in the order they were written, each with where the key and its value
/// were written.
///
/// `position` is the table's header (`[fleet]`), the opening brace of an inline table, the first
/// key of a dotted-key table, or line 1 column 1 for a document's root.
public struct TOMLTable: Equatable, Sendable {
    public var position: TOMLPosition
    public private(set) var keys: [String] = []
    private var storage: [String: TOMLEntry] = [:]

    public init(position: TOMLPosition) {
        self.position = position
    }

    public subscript(key: String) -> TOMLEntry? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// Entries in the order their keys were first written.
    public var entries: [TOMLEntry] { keys.compactMap { storage[$0] } }

    public var isEmpty: Bool { keys.isEmpty }
}

/// One key of a table with its value.
public struct TOMLEntry: Equatable, Sendable {
    public var key: String
    public var keyPosition: TOMLPosition
    public var node: TOMLNode

    public init(key: String, keyPosition: TOMLPosition, node: TOMLNode) {
        self.key = key
        self.keyPosition = keyPosition
        self.node = node
    }

    public var value: TOMLValue { node.value }
}
