import DBus

// A declaration as a method of `org.wearfleet.Daemon1`: its positional arguments in order, then
// an `a{sv}` of its options when it has any; its result as the one output. The daemon exports
// it (`ControlInterface+Commands`), the client calls it (`ControlClient+Commands`).

extension CommandDeclaration {
    /// The method's input arguments.
    public var dbusInputs: [DBusArgument] {
        positionalArguments.map { DBusArgument($0.name, $0.kind.dbusType) }
            + (hasDBusOptions ? [DBusArgument("options", .dictionary(key: .string, value: .variant))] : [])
    }

    /// The method's output arguments.
    public var dbusOutputs: [DBusArgument] {
        switch result {
        case .none: []
        case .bytes(let name, _, _): [DBusArgument(name, .array(.byte))]
        case .word(let name, _, _): [DBusArgument(name, .string)]
        case .records(let name, _, _, _): [DBusArgument(name, .array(.dictionary(key: .string, value: .variant)))]
        }
    }

    /// `(s address, a{sv} options)`, as README writes it.
    public var dbusSignatureText: String {
        let inputs = "(" + dbusInputs.map { "\($0.type.signature) \($0.name)" }.joined(separator: ", ") + ")"
        switch result {
        case .none: return inputs
        case .bytes, .word, .records: return inputs + " → " + dbusOutputs.map(\.type.signature).joined()
        }
    }

    /// A call's arguments as raw values for the checker: positional ones by name, then each
    /// option by its key. The bus has already held the call to `dbusInputs`' signature.
    public func rawArguments(fromDBus body: [DBusValue]) -> [String: RawCommandValue] {
        var raw: [String: RawCommandValue] = [:]
        for (index, argument) in positionalArguments.enumerated() where index < body.count {
            raw[argument.name] = RawCommandValue(dbus: body[index])
        }
        if hasDBusOptions, body.count > positionalArguments.count,
            case .dictionary(_, _, let entries) = body[positionalArguments.count]
        {
            for entry in entries {
                guard case .string(let key) = entry.key else { continue }
                raw[key] = RawCommandValue(dbus: entry.value)
            }
        }
        return raw
    }

    /// A checked command as a call's arguments: positional ones in order, and the options that
    /// were given (a default is the daemon's to apply).
    public func dbusArguments(_ command: CheckedCommand) -> [DBusValue] {
        var values = positionalArguments.map { argument in
            (command.value(argument.name)).map { $0.dbusValue } ?? .string("")
        }
        if hasDBusOptions {
            var options: [String: DBusValue] = [:]
            for argument in self.options {
                if let value = command.given[argument.name] { options[argument.name] = value.dbusValue }
            }
            values.append(.stringVariantMap(options))
        }
        return values
    }

    /// The answer to a call, as the method's outputs.
    public func dbusReply(_ outcome: CommandOutcome) -> [DBusValue] {
        switch (result, outcome) {
        case (.bytes, .bytes(let bytes)): [.bytes(bytes)]
        case (.word, .word(let word)): [.string(word)]
        case (.records, .records(let records)):
            [.array(element: .dictionary(key: .string, value: .variant), records.map { .stringVariantMap($0.dbusProperties) })]
        case (.bytes, _): [.bytes([])]
        case (.word, _): [.string("")]
        case (.records, _): [.array(element: .dictionary(key: .string, value: .variant), [])]
        case (.none, _): []
        }
    }

    /// A reply's outcome, checked against the declared output.
    public func outcome(fromDBus reply: [DBusValue]) throws -> CommandOutcome {
        switch result {
        case .none: return .done
        case .bytes:
            try reply.expectSignature("ay")
            return .bytes(try reply.decode([UInt8].self, at: 0))
        case .word:
            try reply.expectSignature("s")
            return .word(try reply.decode(String.self, at: 0))
        case .records(_, _, let fields, _):
            try reply.expectSignature("aa{sv}")
            let maps = try reply.decode([[String: DBusValue]].self, at: 0)
            return .records(maps.map { CommandRecord(dbus: $0, fields: fields) })
        }
    }
}

extension CommandArgument.Kind {
    /// How D-Bus carries a value of this kind.
    public var dbusType: DBusType {
        switch self {
        case .address, .addressType, .uuid, .string, .word: .string
        case .bytes: .array(.byte)
        case .integer: .int32
        case .bool: .boolean
        }
    }
}

extension CommandValue {
    /// The value as D-Bus carries it (`CommandArgument.Kind.dbusType`).
    public var dbusValue: DBusValue {
        switch self {
        case .address(let address): .string(address.description)
        case .addressType(let type): .string(type.rawValue)
        case .uuid(let text), .string(let text), .word(let text): .string(text)
        case .bytes(let bytes): .bytes(bytes)
        case .integer(let number): .int32(Int32(clamping: number))
        case .bool(let flag): .boolean(flag)
        }
    }
}

extension RawCommandValue {
    /// A D-Bus value (a variant unwrapped) as the checker takes it.
    public init(dbus value: DBusValue) {
        switch value.unwrappingVariant {
        case .string(let text): self = .text(text)
        case .boolean(let flag): self = .bool(flag)
        case .byte(let number): self = .integer(Int64(number))
        case .int16(let number): self = .integer(Int64(number))
        case .uint16(let number): self = .integer(Int64(number))
        case .int32(let number): self = .integer(Int64(number))
        case .uint32(let number): self = .integer(Int64(number))
        case .int64(let number): self = .integer(number)
        case .uint64(let number): self = Int64(exactly: number).map { .integer($0) } ?? .other("an integer beyond 64 bits")
        case .array(.byte, let values):
            self = .bytes(values.compactMap { if case .byte(let byte) = $0 { byte } else { nil } })
        case let other: self = .other("D-Bus type \(other.type.signature)")
        }
    }
}

extension CommandRecord {
    /// The record as an `a{sv}`: strings `s`, integers `x`, numbers `d`, flags `b`, lists `as`.
    public var dbusProperties: [String: DBusValue] {
        var map: [String: DBusValue] = [:]
        for (key, value) in fields {
            map[key] = switch value {
            case .string(let text): .string(text)
            case .integer(let number): .int64(Int64(number))
            case .number(let number): .double(number)
            case .bool(let flag): .boolean(flag)
            case .strings(let texts): .stringArray(texts)
            }
        }
        return map
    }

    /// A record read back from an `a{sv}`: the declared `fields` in their order, then any other
    /// key (a newer daemon's) by name; values of a type no record has are left out.
    init(dbus map: [String: DBusValue], fields: [String]) {
        let keys = fields.filter { map[$0] != nil } + map.keys.filter { !fields.contains($0) }.sorted()
        self.init(keys.map { key in (key, map[key].flatMap(Self.value)) })
    }

    private static func value(_ value: DBusValue) -> Value? {
        switch value.unwrappingVariant {
        case .string(let text): .string(text)
        case .int64(let number): .integer(Int(number))
        case .int32(let number): .integer(Int(number))
        case .uint32(let number): .integer(Int(number))
        case .int16(let number): .integer(Int(number))
        case .double(let number): .number(number)
        case .boolean(let flag): .bool(flag)
        case .array(_, let elements):
            .strings(elements.compactMap { if case .string(let text) = $0.unwrappingVariant { text } else { nil } })
        default: nil
        }
    }
}
