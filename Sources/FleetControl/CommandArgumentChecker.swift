import BluetoothVocabulary
import GATT

/// The one checker of command arguments. Each front end hands it the raw values it received,
/// by the names it knows them by (`CommandArgument.name(on:)`); it answers a `CheckedCommand`
/// or the first `CommandRejection`, naming the argument and the form it must have. No front end
/// checks an argument of its own: limits live in the catalogue, and only here are they applied.
public enum CommandArgumentChecker {
    /// Checks `raw` against `declaration` as `frontEnd` spells it. `implied` are values the front
    /// end knows from elsewhere (MQTT's device topic gives `address`): given again in `raw`, they
    /// are refused as unexpected.
    public static func check(
        _ declaration: CommandDeclaration, _ raw: [String: RawCommandValue], on frontEnd: CommandFrontEnd,
        implied: [String: CommandValue] = [:]
    ) throws(CommandRejection) -> CheckedCommand {
        let op = declaration.op
        let aliases = declaration.aliases(on: frontEnd)
        // Unknown names first, in a stable order: the argument a refusal names is always the same.
        for key in raw.keys.sorted() {
            let argument = declaration.argument(key, on: frontEnd)
            let known = (argument != nil && implied[argument?.name ?? ""] == nil) || aliases.contains { $0.name == key }
            guard known else { throw CommandRejection(op: op, argument: key, problem: .unexpected) }
        }
        var given = implied
        for argument in declaration.arguments where implied[argument.name] == nil {
            let key = argument.name(on: frontEnd)
            let alias = aliases.first { $0.argument == argument.name && raw[$0.name] != nil }
            if let alias, raw[key] != nil {
                throw CommandRejection(op: op, argument: key, problem: .conflicting(with: alias.name))
            }
            if let value = raw[key] {
                given[argument.name] = try self.value(of: argument, value, named: key, op: op)
            } else if let alias, let value = raw[alias.name] {
                let flag: Bool
                switch value {
                case .bool(let bool): flag = bool
                case .word("true"): flag = true
                case .word("false"): flag = false
                default: throw CommandRejection(op: op, argument: alias.name, problem: .mistyped(expected: "true or false"))
                }
                if let word = flag ? alias.whenTrue : alias.whenFalse {
                    given[argument.name] = try self.value(of: argument, .text(word), named: key, op: op)
                }
            } else if argument.required {
                throw CommandRejection(op: op, argument: key, problem: .missing, errorName: CommandCatalogue.errorNames(for: argument.kind)[0])
            }
        }
        return CheckedCommand(declaration.name, given: given, frontEnd: frontEnd)
    }

    /// One argument's value from its raw form, or why not.
    public static func value(
        of argument: CommandArgument, _ raw: RawCommandValue, named key: String, op: String
    ) throws(CommandRejection) -> CommandValue {
        let errorName = CommandCatalogue.errorNames(for: argument.kind)[0]
        func mistyped(_ expected: String) -> CommandRejection {
            CommandRejection(op: op, argument: key, problem: .mistyped(expected: expected), errorName: errorName)
        }
        func invalid(_ found: String?, showsFound: Bool = true, errorName name: String? = nil) -> CommandRejection {
            CommandRejection(
                op: op, argument: key, problem: .invalid(expected: expected(argument.kind), found: found.map { String($0.prefix(32)) }),
                errorName: name ?? errorName, showsFound: showsFound)
        }
        /// The text of a string or a command-line word; nil for anything else.
        var text: String? {
            switch raw {
            case .text(let text), .word(let text): text
            default: nil
            }
        }
        switch argument.kind {
        case .address:
            guard let text else { throw mistyped("a string") }
            guard let address = BluetoothAddress(text) else { throw invalid(text) }
            return .address(address)
        case .addressType:
            guard let text else { throw mistyped("a string") }
            guard let type = AddressType(rawValue: text) else { throw invalid(text) }
            return .addressType(type)
        case .uuid:
            guard let text else { throw mistyped("a string") }
            guard BluetoothUUID(text) != nil else { throw invalid(text) }
            return .uuid(text)
        case .bytes(let count):
            let bytes: [UInt8]
            switch raw {
            case .bytes(let value): bytes = value
            case .text(let hex), .word(let hex):
                guard let value = Self.bytes(hex: hex) else {
                    throw CommandRejection(
                        op: op, argument: key, problem: .invalid(expected: "an even number of hex digits", found: String(hex.prefix(32))),
                        errorName: WearfleetControl.ErrorName.invalidOption, showsFound: false)
                }
                bytes = value
            default: throw mistyped("a string of hex digits")
            }
            guard count.contains(bytes.count) else {
                let name = bytes.count > count.upperBound ? WearfleetControl.ErrorName.tooLarge : WearfleetControl.ErrorName.invalidOption
                throw invalid("\(bytes.count) bytes", showsFound: false, errorName: name)
            }
            return .bytes(bytes)
        case .string(let limit):
            guard let text else { throw mistyped("a string") }
            guard limit.contains(text.utf8.count) else { throw invalid(text, showsFound: false) }
            return .string(text)
        case .integer(let range):
            let number: Int?
            switch raw {
            case .integer(let value): number = Int(exactly: value)
            case .number(let text): number = Int(text)
            case .word(let text):
                guard let value = Int(text) else { throw mistyped("an integer") }
                number = value
            default: throw mistyped("an integer")
            }
            guard let number, range.contains(number) else { throw invalid(nil, showsFound: false) }
            return .integer(number)
        case .word(let words):
            guard let text else { throw mistyped("a string") }
            guard words.contains(text) else { throw invalid(text) }
            return .word(text)
        case .bool:
            switch raw {
            case .bool(let flag): return .bool(flag)
            case .word("true"): return .bool(true)
            case .word("false"): return .bool(false)
            default: throw mistyped("true or false")
            }
        }
    }

    /// What a value of `kind` must be, as refusals and help say it.
    public static func expected(_ kind: CommandArgument.Kind) -> String {
        switch kind {
        case .address: "a Bluetooth address (AA:BB:CC:DD:EE:FF)"
        case .addressType: "public or random"
        case .uuid: "a Bluetooth UUID (2a37, or the 32- or 128-bit form)"
        case .bytes(let count): "\(count.lowerBound) to \(count.upperBound) bytes long"
        case .string(let bytes) where bytes.lowerBound == 0: "at most \(bytes.upperBound) bytes long"
        case .string(let bytes): "\(bytes.lowerBound) to \(bytes.upperBound) bytes long"
        case .integer(let range): "an integer from \(range.lowerBound) to \(range.upperBound)"
        case .word(let words): listed(words)
        case .bool: "true or false"
        }
    }

    /// `control, normal or bulk`.
    static func listed(_ words: [String]) -> String {
        guard let last = words.last, words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + last
    }

    /// Bytes from hex text: two digits a byte, either case, `:`, `-` or a space allowed between
    /// bytes; nil for anything else. At most 4,096 characters are read.
    public static func bytes(hex text: String) -> [UInt8]? {
        guard text.utf8.count <= 4096 else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            if high == nil, character == UInt8(ascii: ":") || character == UInt8(ascii: "-") || character == UInt8(ascii: " ") {
                continue
            }
            guard let nibble = nibble(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
