// README's tables of commands, made from the catalogue: the D-Bus methods, the errors, the MQTT
// ops and wearfleetctl's usage lines. README keeps each between marker comments
// (`<!-- commands:dbus -->` … `<!-- /commands:dbus -->`); a test holds them equal to these.

extension CommandCatalogue {
    /// Each README section by its marker name, in README's order.
    public static var markdownSections: [(marker: String, text: String)] {
        [("dbus", dbusTable), ("errors", errorTable), ("mqtt", mqttTable), ("wearfleetctl", commandLineUsage)]
    }

    /// `readme` with every marked section replaced by the catalogue's; nil when a marker is missing.
    public static func replacingMarkdownSections(in readme: String) -> String? {
        var text = readme
        for (marker, section) in markdownSections {
            let open = "<!-- commands:\(marker) -->\n"
            let close = "<!-- /commands:\(marker) -->"
            guard let start = text.firstRange(of: open), let end = text[start.upperBound...].firstRange(of: close) else { return nil }
            text.replaceSubrange(start.upperBound..<end.lowerBound, with: section)
        }
        return text
    }

    /// The D-Bus methods: member, signature, what it does with its options and errors.
    public static var dbusTable: String {
        var lines = ["| member | signature | what |", "|---|---|---|"]
        for command in all {
            var what = command.abstract
            if let discussion = command.discussion { what += " " + discussion }
            let options = command.options.map { "`\($0.name)` \($0.kind.dbusType.signature) (\(describe($0, on: .dbus)))" }
                + command.aliases(on: .dbus).map { "`\($0.name)` b (true: `\($0.argument)` `\($0.whenTrue)`\($0.whenFalse.map { ", false: `\($0)`" } ?? ""))" }
            if !options.isEmpty { what += " Options: " + options.joined(separator: ", ") + "." }
            if case .word(let name, _, let help) = command.result { what += " Answers `\(name)`: \(help)." }
            if case .records(let name, _, _, let help) = command.result { what += " Answers `\(name)`: \(help)." }
            what += " Errors: " + command.allErrors.map { "`\($0.split(separator: ".").last ?? "")`" }.joined(separator: ", ") + "."
            lines.append("| `\(command.member)` | `\(command.dbusSignatureText)` | \(what) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every error name and when it is answered.
    public static var errorTable: String {
        var lines = ["| error | when |", "|---|---|"]
        for (name, when) in errorDocumentation {
            let short = name.hasPrefix("org.wearfleet.Error.") ? String(name.dropFirst("org.wearfleet.Error.".count)) : name
            lines.append("| `\(short)` | \(when) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The MQTT ops, each with its scopes, arguments and result.
    public static var mqttTable: String {
        var lines = ["| op | scope | arguments | result |", "|---|---|---|---|"]
        for command in all {
            var scopes: [String] = []
            if command.scopes.contains(.device) { scopes.append("device") }
            if command.scopes.contains(.gateway) { scopes.append("gateway") }
            // At device scope the address is the topic's: an argument only at gateway scope.
            let arguments = command.arguments.compactMap { argument -> String? in
                let isAddress = argument.name == "address"
                if isAddress, !command.scopes.contains(.gateway) { return nil }
                let name = isAddress ? "`address` (gateway scope only)" : "`\(argument.jsonKey)`"
                return "\(argument.required ? "" : "optional ")\(name) (\(describe(argument, on: .mqtt)))"
            }
            let result: String = switch command.result {
            case .none: ""
            case .bytes(_, let key, let help): "`\"\(key)\"`: \(help)"
            case .word(_, let key, let help): "`\"\(key)\"`: \(help)"
            case .records(_, let key, let fields, let help):
                "`\"\(key)\"`: \(help), each " + fields.map { "`\($0)`" }.joined(separator: ", ")
            }
            let listed = arguments.isEmpty ? "none" : arguments.joined(separator: ", ")
            lines.append("| `\(command.op)` | \(scopes.joined(separator: ", ")) | \(listed) | \(result) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// wearfleetctl's usage line of every command.
    public static var commandLineUsage: String {
        (["```sh"] + all.map { "wearfleetctl " + $0.commandLineUsage } + ["```"]).joined(separator: "\n") + "\n"
    }

    /// `control, normal or bulk; default: the class's default_qos`.
    static func describe(_ argument: CommandArgument, on frontEnd: CommandFrontEnd) -> String {
        var text: String = switch argument.kind {
        case .bytes(let count) where frontEnd == .dbus: "\(count.lowerBound) to \(count.upperBound) bytes"
        case .bytes(let count): "hex, \(count.lowerBound) to \(count.upperBound) bytes"
        case .word(let words): words.map { "`\($0)`" }.joined(separator: ", ")
        case .addressType: "`public`, `random`"
        case .address: "`AA:BB:CC:DD:EE:FF`"
        case .uuid: "`2a37`, or the 32- or 128-bit form"
        default: CommandArgumentChecker.expected(argument.kind)
        }
        if let value = argument.defaultValue(on: frontEnd) {
            text += "; default `\(value.text)`"
        } else if let defaultText = argument.defaultText {
            text += "; default: \(defaultText)"
        }
        return text
    }
}
