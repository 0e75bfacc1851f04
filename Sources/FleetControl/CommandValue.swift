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
}
