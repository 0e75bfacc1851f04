/// One argument of a command, declared once in the catalogue: every front end reads it under
/// its names, the one checker (`CommandArgumentChecker`) holds it to its kind and limits, and
/// the README tables and wearfleetctl's help describe it from here.
public struct CommandArgument: Sendable {
    /// What values the argument takes, and how each front end spells them.
    public enum Kind: Sendable, Hashable {
        /// `AA:BB:CC:DD:EE:FF`, either case.
        case address
        /// `public` or `random`.
        case addressType
        /// A Bluetooth UUID: 16-bit (`2a37`), 32-bit or 128-bit form.
        case uuid
        /// Bytes: D-Bus `ay`; hex text on MQTT and the command line.
        case bytes(count: ClosedRange<Int>)
        /// UTF-8 text of so many bytes.
        case string(bytes: ClosedRange<Int>)
        case integer(ClosedRange<Int>)
        /// One of these words.
        case word([String])
        case bool
    }

    /// Where the argument sits in a D-Bus call: in order among the method's arguments, or a key
    /// of its trailing `a{sv}` options. Positional ones are positional on the command line too,
    /// options are `--name value` (`--name` alone for a bool).
    public enum Placement: Sendable, Hashable {
        case positional, option
    }

    /// The argument's name: the D-Bus argument or option, wearfleetctl's `--name` (`_` written
    /// `-`), and what a refusal names.
    public var name: String
    /// Its key in an MQTT request (`characteristic` for a UUID, `hex` for bytes).
    public var jsonKey: String
    public var kind: Kind
    public var placement: Placement
    public var required: Bool
    /// The value an absent optional argument has, nil when absence means something of its own
    /// (`defaultText` says what).
    public var defaultValue: CommandValue?
    /// A front end whose absent value differs, as it did before the catalogue (write's `mode`
    /// is `auto` on MQTT, `request` elsewhere).
    public var frontEndDefaults: [CommandFrontEnd: CommandValue]
    /// What absence means, for help and README, when there is no `defaultValue`.
    public var defaultText: String?
    public var help: String

    public init(
        _ name: String, _ kind: Kind, placement: Placement = .option, required: Bool = false, jsonKey: String? = nil,
        default defaultValue: CommandValue? = nil, frontEndDefaults: [CommandFrontEnd: CommandValue] = [:], defaultText: String? = nil,
        help: String
    ) {
        self.name = name
        self.jsonKey = jsonKey ?? name
        self.kind = kind
        self.placement = placement
        self.required = required
        self.defaultValue = defaultValue
        self.frontEndDefaults = frontEndDefaults
        self.defaultText = defaultText
        self.help = help
    }

    /// A required positional argument.
    public static func positional(_ name: String, _ kind: Kind, jsonKey: String? = nil, help: String) -> CommandArgument {
        CommandArgument(name, kind, placement: .positional, required: true, jsonKey: jsonKey, help: help)
    }

    /// The name `frontEnd` knows the argument by.
    public func name(on frontEnd: CommandFrontEnd) -> String {
        frontEnd == .mqtt ? jsonKey : name
    }

    /// The value of the argument when `frontEnd` did not give it.
    public func defaultValue(on frontEnd: CommandFrontEnd) -> CommandValue? {
        frontEndDefaults[frontEnd] ?? defaultValue
    }

    /// wearfleetctl's option: `--address-type`.
    public var commandLineOption: String { "--" + name.replacingUnderscores }
}

/// The three ways in: the D-Bus interface, MQTT requests, wearfleetctl's command line.
public enum CommandFrontEnd: String, Sendable, Hashable, CaseIterable {
    case dbus, mqtt, cli
}

extension String {
    /// `address_type` → `address-type`, as command-line options are spelt.
    var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
