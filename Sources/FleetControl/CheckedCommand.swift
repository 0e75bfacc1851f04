import BluetoothVocabulary

/// A command whose arguments the checker took (`CommandArgumentChecker`): every value of its
/// argument's kind and within its limits, every required one present. What was given is kept
/// apart from the defaults, so a client sends only what the user said.
public struct CheckedCommand: Sendable, Hashable {
    public let name: CommandName
    /// The values given, by argument name (an alias's already turned into its argument's).
    public let given: [String: CommandValue]
    /// The front end whose defaults fill what was not given.
    public let frontEnd: CommandFrontEnd

    public init(_ name: CommandName, given: [String: CommandValue], frontEnd: CommandFrontEnd) {
        self.name = name
        self.given = given
        self.frontEnd = frontEnd
    }

    public var declaration: CommandDeclaration { name.declaration }

    /// The argument's value: given, else its default on this front end; nil when absent.
    public func value(_ argument: String) -> CommandValue? {
        given[argument] ?? declaration.argument(named: argument)?.defaultValue(on: frontEnd)
    }

    // MARK: - Typed values (nil when absent or of another kind)

    /// The `address` argument.
    public var address: BluetoothAddress? {
        if case .address(let address)? = value("address") { address } else { nil }
    }

    public func addressType(_ argument: String) -> AddressType? {
        if case .addressType(let type)? = value(argument) { type } else { nil }
    }

    public func uuid(_ argument: String) -> String? {
        if case .uuid(let text)? = value(argument) { text } else { nil }
    }

    public func bytes(_ argument: String) -> [UInt8]? {
        if case .bytes(let bytes)? = value(argument) { bytes } else { nil }
    }

    public func string(_ argument: String) -> String? {
        if case .string(let text)? = value(argument) { text } else { nil }
    }

    public func integer(_ argument: String) -> Int? {
        if case .integer(let number)? = value(argument) { number } else { nil }
    }

    public func word(_ argument: String) -> String? {
        if case .word(let word)? = value(argument) { word } else { nil }
    }

    public func bool(_ argument: String) -> Bool? {
        if case .bool(let flag)? = value(argument) { flag } else { nil }
    }
}
