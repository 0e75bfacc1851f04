// A declaration as a wearfleetctl subcommand: `wearfleetctl <op> POSITIONAL… [--option value]…
// [--flag]… [--json] [--bus ADDRESS]`, its usage and help made from the declaration. The words
// are only sorted here; the checker decides what they mean.

/// What a command line asks for.
public enum CommandLineRequest: Sendable, Hashable {
    /// Run the command; `words` keeps each argument as it was typed (for the printed result).
    case run(CheckedCommand, words: [String: String], json: Bool, bus: String?)
    /// Print the command's help.
    case help
}

extension CommandDeclaration {
    /// The words after the op, as a request; a rejection names the word or argument at fault.
    public func parseCommandLine(_ words: [String]) throws(CommandRejection) -> CommandLineRequest {
        var raw: [String: RawCommandValue] = [:]
        var typed: [String: String] = [:]
        var json = false
        var bus: String?
        var positional = positionalArguments.makeIterator()
        var index = 0
        func rejection(_ word: String, _ problem: CommandRejection.Problem) -> CommandRejection {
            CommandRejection(op: op, argument: word, problem: problem)
        }
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--") || word == "-h" else {
                guard let argument = positional.next() else { throw rejection(word, .unexpected) }
                raw[argument.name] = .word(word)
                typed[argument.name] = word
                continue
            }
            // `--name=value` or `--name value`.
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            let option = parts[0]
            var inlineValue = parts.count > 1 ? parts[1] : nil
            func value() throws(CommandRejection) -> String {
                if let inline = inlineValue {
                    inlineValue = nil
                    return inline
                }
                guard index < words.count else { throw rejection(option, .missing) }
                index += 1
                return words[index - 1]
            }
            switch option {
            case "--help", "-h": return .help
            case "--json": json = true
            case "--bus": bus = try value()
            default:
                if let argument = options.first(where: { $0.commandLineOption == option }) {
                    if argument.kind == .bool, inlineValue == nil {
                        raw[argument.name] = .bool(true)
                    } else {
                        let text = try value()
                        raw[argument.name] = .word(text)
                        typed[argument.name] = text
                    }
                } else if let alias = aliases(on: .cli).first(where: { $0.commandLineFlag == option }), inlineValue == nil {
                    raw[alias.name] = .bool(true)
                } else {
                    throw rejection(option, .unexpected)
                }
            }
        }
        let command = try CommandArgumentChecker.check(self, raw, on: .cli)
        return .run(command, words: typed, json: json, bus: bus)
    }

    /// `pin ADDRESS [--address-type public|random] … [--json] [--bus ADDRESS]`.
    public var commandLineUsage: String {
        var parts = [op] + positionalArguments.map(\.metavariable)
        for argument in options {
            parts.append(argument.kind == .bool ? "[\(argument.commandLineOption)]" : "[\(argument.commandLineOption) \(argument.metavariable)]")
        }
        for alias in aliases(on: .cli) { parts.append("[\(alias.commandLineFlag)]") }
        return (parts + ["[--json]", "[--bus ADDRESS]"]).joined(separator: " ")
    }

    /// `wearfleetctl <op> --help`.
    public var commandLineHelp: String {
        var lines = ["OVERVIEW: \(abstract)", ""]
        if let discussion { lines += [discussion.filter { $0 != "`" }, ""] }
        lines += ["USAGE: wearfleetctl \(commandLineUsage)", "", "ARGUMENTS:"]
        for argument in positionalArguments {
            lines.append(Self.helpLine(argument.metavariable, argument.help))
        }
        lines += ["", "OPTIONS:"]
        for argument in options {
            let name = argument.kind == .bool ? argument.commandLineOption : "\(argument.commandLineOption) \(argument.metavariable)"
            lines.append(Self.helpLine(name, argument.help + argument.defaultNote(on: .cli)))
        }
        for alias in aliases(on: .cli) {
            lines.append(Self.helpLine(alias.commandLineFlag, "Short for --\(alias.argument.replacingUnderscores) \(alias.whenTrue)."))
        }
        lines.append(Self.helpLine("--json", "Print a JSON object (schema in README, \"wearfleetctl\") instead of a line of text."))
        lines.append(Self.helpLine("--bus ADDRESS", "The D-Bus address wearfleetd is on (default: the system bus)."))
        lines.append(Self.helpLine("-h, --help", "Show help information."))
        let access = self.access == .admin ? "Only root and members of group \(WearfleetControl.adminGroup) may run it." : nil
        return (lines + (access.map { ["", $0] } ?? [])).joined(separator: "\n")
    }

    private static func helpLine(_ name: String, _ help: String) -> String {
        let padded = name.count < 28 ? name + String(repeating: " ", count: 28 - name.count) : name + "  "
        return "  " + padded + help
    }
}

extension CommandArgument {
    /// How help and usage write the value: `ADDRESS`, `HEX`, `control|normal|bulk`, `N`.
    public var metavariable: String {
        switch kind {
        case .address: "ADDRESS"
        case .addressType: "public|random"
        case .uuid: "UUID"
        case .bytes: "HEX"
        case .string: name.uppercased()
        case .integer: "N"
        case .word(let words): words.joined(separator: "|")
        case .bool: "true|false"
        }
    }

    /// ` (default: request)`, or nothing for a required argument without one.
    func defaultNote(on frontEnd: CommandFrontEnd) -> String {
        if let value = defaultValue(on: frontEnd), kind != .bool { return " (default: \(value.text))" }
        if let defaultText { return " (default: \(defaultText))" }
        return ""
    }
}

extension CommandValue {
    /// The value as a person writes it.
    public var text: String {
        switch self {
        case .address(let address): address.description
        case .addressType(let type): type.rawValue
        case .uuid(let text), .string(let text), .word(let text): text
        case .bytes(let bytes): ControlCommandResult.hex(bytes)
        case .integer(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        }
    }
}
