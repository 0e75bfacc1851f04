/// Why the checker refused a command's arguments: which argument, what it must be, and the
/// `org.wearfleet.Error.*` name D-Bus answers with. Nothing was asked of the fleet.
public struct CommandRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Problem: Sendable, Hashable {
        /// A required argument is absent.
        case missing
        /// The command takes no such argument.
        case unexpected
        /// Of the wrong type: it must be `expected` (`a string`, `an integer`, `true or false`).
        case mistyped(expected: String)
        /// Of the right type but not a value the argument takes: it must be `expected`; `found`
        /// is what came (cut to 32 characters).
        case invalid(expected: String, found: String?)
        /// Two spellings of one argument given together (`mode` and `without_response`).
        case conflicting(with: String)
    }

    /// The op: `write`.
    public var op: String
    /// The argument as the front end named it.
    public var argument: String
    public var problem: Problem
    /// The D-Bus error name (`InvalidAddress`, `InvalidUUID`, `TooLarge`, `InvalidOption`).
    public var errorName: String
    /// Whether the message repeats what was found: for words, addresses and UUIDs, which are
    /// short and whose misspelling is the point; not for numbers and hex, whose fault is their form.
    public var showsFound: Bool

    public init(op: String, argument: String, problem: Problem, errorName: String = WearfleetControl.ErrorName.invalidOption, showsFound: Bool = true) {
        self.op = op
        self.argument = argument
        self.problem = problem
        self.errorName = errorName
        self.showsFound = showsFound
    }

    /// The message D-Bus and MQTT answer with: `'qos' must be control, normal or bulk, found "urgent"`.
    public var description: String {
        switch problem {
        case .missing: "\(op) needs '\(argument)'"
        case .unexpected: "\(op) takes no argument '\(argument)'"
        case .mistyped(let expected): "'\(argument)' must be \(expected)"
        case .invalid(let expected, let found?) where showsFound: "'\(argument)' must be \(expected), found \"\(found)\""
        case .invalid(let expected, _): "'\(argument)' must be \(expected)"
        case .conflicting(let other): "'\(argument)' and '\(other)' say the same thing: give one of them"
        }
    }

    /// The message wearfleetctl prints, in the form its other usage errors have:
    /// `invalid value '0g': expected an even number of hex digits`.
    public var commandLineDescription: String {
        switch problem {
        case .invalid(let expected, let found?): "invalid \(argument) '\(found)': expected \(expected)"
        case .mistyped(let expected): "invalid \(argument): expected \(expected)"
        case .missing where argument.hasPrefix("-"): "\(argument) needs a value"
        case .missing: "\(op) needs \(argument)"
        case .unexpected where argument.hasPrefix("-"): "unknown option '\(argument)'"
        case .unexpected: "unexpected argument '\(argument)'"
        default: description
        }
    }
}
