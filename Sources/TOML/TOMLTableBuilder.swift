// TOML's redefinition rules depend on how a table came to exist (a header, a dotted key, a path
// through a deeper header, an inline table), which the finished `TOMLTable` does not need to carry.
// The parser therefore builds mutable reference nodes and freezes them into values at the end.

/// A table while the parser is still filling it. Confined to one parse call, never shared.
final class TOMLTableBuilder {
    enum Origin {
        /// The document root.
        case root
        /// Created as an intermediate of a deeper header (`a` in `[a.b]`); a later `[a]` may define it.
        case implicit
        /// Defined by `[header]` or as one element of `[[header]]`.
        case header
        /// Created by a dotted key (`a.b = 1` creates `a`); only dotted keys may add to it.
        case dotted
        /// The root of an inline table.
        case inline
    }

    enum Content {
        case value(TOMLNode)
        case table(TOMLTableBuilder)
        /// A reference, so that `[[x]]` appends in place instead of copying every earlier element.
        case tableArray(TOMLTableArrayBuilder)
    }

    struct Slot {
        var keyPosition: TOMLPosition
        var content: Content
    }

    var origin: Origin
    var position: TOMLPosition
    let path: [String]
    private(set) var keys: [String] = []
    private(set) var slots: [String: Slot] = [:]

    init(origin: Origin, position: TOMLPosition, path: [String]) {
        self.origin = origin
        self.position = position
        self.path = path
    }

    subscript(key: String) -> Slot? {
        slots[key]
    }

    func set(_ key: String, _ slot: Slot) {
        if slots.updateValue(slot, forKey: key) == nil { keys.append(key) }
    }

    /// The finished value; tables nested in it are frozen too.
    func freeze() -> TOMLTable {
        var table = TOMLTable(position: position)
        for key in keys {
            guard let slot = slots[key] else { continue }
            let node: TOMLNode
            switch slot.content {
            case .value(let value):
                node = value
            case .table(let builder):
                node = TOMLNode(value: .table(builder.freeze()), position: builder.position)
            case .tableArray(let array):
                let builders = array.tables
                let elements = builders.map { TOMLNode(value: .table($0.freeze()), position: $0.position) }
                node = TOMLNode(value: .array(elements), position: builders.first?.position ?? slot.keyPosition)
            }
            table[key] = TOMLEntry(key: key, keyPosition: slot.keyPosition, node: node)
        }
        return table
    }
}

/// The tables of one `[[array]]` so far, in order; never empty once stored in a slot.
final class TOMLTableArrayBuilder {
    var tables: [TOMLTableBuilder]

    init(first: TOMLTableBuilder) {
        tables = [first]
    }
}
