/// One command, declared once: its names, arguments, who may run it, what it answers and the
/// errors it can answer with. The D-Bus method, the MQTT ops, wearfleetctl's subcommand and the
/// README's rows are all made from it (`CommandCatalogue`).
public struct CommandDeclaration: Sendable {
    /// Where on MQTT the command is asked for. At `device` scope the device is the topic's
    /// (`<prefix>/device/<ADDR>/command`: the `address` argument comes from it); at `gateway`
    /// scope it is a fleet-level request (`<prefix>/gateway/<id>/request/<op>`) whose arguments
    /// are all in the JSON. D-Bus and wearfleetctl offer every command, its arguments as declared.
    public struct Scopes: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let device = Scopes(rawValue: 1)
        public static let gateway = Scopes(rawValue: 2)
    }

    /// Who may run it on D-Bus (MQTT's `allow_commands` governs the broker).
    public enum Access: Sendable, Hashable {
        /// Root and group `wearfleet` (the bus policy): no check of the daemon's own.
        case reading
        /// Root and group `wearfleet-admin`, checked by the bus policy and again by the daemon.
        case admin
    }

    /// What a successful command answers besides "done".
    public enum Result: Sendable, Hashable {
        case none
        /// Bytes: D-Bus `ay` named `name`, hex under `jsonKey` on MQTT.
        case bytes(name: String, jsonKey: String, help: String)
        /// A word: D-Bus `s` named `name`, a string under `jsonKey` on MQTT.
        case word(name: String, jsonKey: String, help: String)
        /// A list of records (`CommandRecord`) with these fields: D-Bus `aa{sv}` named `name`,
        /// an array of objects under `jsonKey` on MQTT, a table on the command line.
        case records(name: String, jsonKey: String, fields: [String], help: String)
    }

    /// Another spelling of a word argument, kept where a front end had it before the catalogue:
    /// a bool (a D-Bus option, a command-line flag) that stands for one word when true and
    /// another (or nothing) when false. Given together with its argument, it is refused.
    public struct Alias: Sendable, Hashable {
        public var name: String
        /// The word argument it sets.
        public var argument: String
        public var whenTrue: String
        public var whenFalse: String?
        public var frontEnds: Set<CommandFrontEnd>

        public init(_ name: String, sets argument: String, whenTrue: String, whenFalse: String? = nil, on frontEnds: Set<CommandFrontEnd>) {
            self.name = name
            self.argument = argument
            self.whenTrue = whenTrue
            self.whenFalse = whenFalse
            self.frontEnds = frontEnds
        }

        /// wearfleetctl's flag: `--without-response`.
        public var commandLineFlag: String { "--" + name.replacingUnderscores }
    }

    public var name: CommandName
    /// The D-Bus method: `Pin`.
    public var member: String
    public var scopes: Scopes
    public var access: Access
    public var arguments: [CommandArgument]
    public var aliases: [Alias]
    public var result: Result
    /// The `org.wearfleet.Error.*` names it may answer with, besides the arguments' own
    /// (`CommandCatalogue.argumentErrors`).
    public var errors: [String]
    /// One line: wearfleetctl's help, the README's tables.
    public var abstract: String
    /// More for the README's D-Bus table and `--help`, when one line is not enough.
    public var discussion: String?

    public init(
        _ name: CommandName, member: String, scopes: Scopes = .device, access: Access = .admin, arguments: [CommandArgument],
        aliases: [Alias] = [], result: Result = .none, errors: [String], abstract: String, discussion: String? = nil
    ) {
        self.name = name
        self.member = member
        self.scopes = scopes
        self.access = access
        self.arguments = arguments
        self.aliases = aliases
        self.result = result
        self.errors = errors
        self.abstract = abstract
        self.discussion = discussion
    }

    /// The op: `pin`.
    public var op: String { name.rawValue }

    public var positionalArguments: [CommandArgument] { arguments.filter { $0.placement == .positional } }
    public var options: [CommandArgument] { arguments.filter { $0.placement == .option } }

    /// The argument `frontEnd` calls `key`.
    public func argument(_ key: String, on frontEnd: CommandFrontEnd) -> CommandArgument? {
        arguments.first { $0.name(on: frontEnd) == key }
    }

    /// The argument named `name` (its catalogue name).
    public func argument(named name: String) -> CommandArgument? {
        arguments.first { $0.name == name }
    }

    /// The aliases `frontEnd` knows.
    public func aliases(on frontEnd: CommandFrontEnd) -> [Alias] {
        aliases.filter { $0.frontEnds.contains(frontEnd) }
    }

    /// Whether the D-Bus method ends with an `a{sv}` of options.
    public var hasDBusOptions: Bool { !options.isEmpty || !aliases(on: .dbus).isEmpty }

    /// Every error name it may answer with: its arguments' and its own, in the catalogue's order.
    public var allErrors: [String] {
        var names: [String] = []
        for argument in arguments {
            for name in CommandCatalogue.errorNames(for: argument.kind) where !names.contains(name) { names.append(name) }
        }
        for name in errors where !names.contains(name) { names.append(name) }
        return names
    }
}
