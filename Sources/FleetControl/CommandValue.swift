import BluetoothVocabulary

/// An argument's value once the checker took it (`CommandArgumentChecker`): of the argument's
/// kind, within its limits.
public enum CommandValue: Sendable, Hashable {
    case address(BluetoothAddress)
    case addressType(AddressType)
    /// A Bluetooth UUID as it was given (`2a37` or a 128-bit form): the fleet takes any form.
    case uuid(String)
    case bytes([UInt8])
    case string(String)
    case integer(Int)
    /// One of the argument's words.
    case word(String)
    case bool(Bool)
}

/// An argument's value as a front end received it, before any check: every front end turns its
/// own form into these (D-Bus arguments and `a{sv}` options, MQTT's JSON fields, wearfleetctl's
/// words), and `CommandArgumentChecker` alone decides what they mean.
public enum RawCommandValue: Sendable, Hashable {
    /// A typed string: D-Bus `s`, a JSON string.
    case text(String)
    /// A word of a command line: any kind that can be spelt (an integer, hex, a word) reads it.
    case word(String)
    /// A JSON number, its text.
    case number(String)
    /// A D-Bus integer of any width.
    case integer(Int64)
    case bool(Bool)
    /// D-Bus `ay`.
    case bytes([UInt8])
    /// Anything else, by what it is (`an array`, `D-Bus type ad`): always mistyped.
    case other(String)
}

/// What a command answered, as every front end reports it (`CommandDeclaration.Result` says which).
public enum CommandOutcome: Sendable, Hashable {
    case done
    case bytes([UInt8])
    case word(String)
    case records([CommandRecord])
}

/// One record of a command's answer (a device `nearby` hears): fields in the declaration's
/// order, a field whose value is unknown left out.
public struct CommandRecord: Sendable, Hashable {
    public enum Value: Sendable, Hashable {
        case string(String)
        case integer(Int)
        case number(Double)
        case bool(Bool)
        case strings([String])

        /// As a text table shows it.
        public var text: String {
            switch self {
            case .string(let text): text
            case .integer(let number): String(number)
            case .number(let number): String(tenths: number)
            case .bool(let flag): flag ? "yes" : "no"
            case .strings(let texts): texts.joined(separator: ",")
            }
        }
    }

    public var fields: [(key: String, value: Value)]

    public init(_ fields: [(key: String, value: Value?)]) {
        self.fields = fields.compactMap { field in field.value.map { (field.key, $0) } }
    }

    public subscript(key: String) -> Value? { fields.first { $0.key == key }?.value }

    public static func == (lhs: CommandRecord, rhs: CommandRecord) -> Bool {
        lhs.fields.map(\.key) == rhs.fields.map(\.key) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.key)
            hasher.combine(field.value)
        }
    }
}

extension String {
    fileprivate init(tenths number: Double) {
        let tenths = (number * 10).rounded() / 10
        self = tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
