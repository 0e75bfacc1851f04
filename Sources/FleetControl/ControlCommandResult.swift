import FoundationEssentials

/// What `wearfleetctl pin|unpin|disconnect|reconnect|read|write|subscribe|unsubscribe` prints once the daemon
/// answered: one line of text, or (`--json`) one JSON object with `schemaVersion`, `command`,
/// `address` and `ok` (always true: a refusal is an error on stderr and an exit code), plus
/// `uuid` and `value` (hex) for `read`, `uuid` for `subscribe` and `unsubscribe`, and `uuid`,
/// `bytes`, `qos` and `outcome` for `write`.
public struct ControlCommandResult: Sendable, Hashable, Encodable {
    public var command: String
    public var address: String
    public var uuid: String?
    /// `read`: the value, lower-case hex.
    public var value: String?
    /// `write`: how many bytes were written.
    public var bytes: Int?
    public var qos: String?
    /// `write`: `acknowledged` (with response) or `sent` (without).
    public var outcome: String?
    /// A command answered with records (`nearby`): their fields, in order, and the records.
    public var recordFields: [String]?
    public var records: [CommandRecord]?

    public init(
        command: String, address: String, uuid: String? = nil, value: [UInt8]? = nil, bytes: Int? = nil, qos: String? = nil,
        outcome: String? = nil
    ) {
        self.command = command
        self.address = address
        self.uuid = uuid
        self.value = value.map(Self.hex)
        self.bytes = bytes
        self.qos = qos
        self.outcome = outcome
    }

    /// The line a person reads (a table, for records).
    public var text: String {
        if let records, let fields = recordFields {
            guard !records.isEmpty else { return "nothing heard outside the fleet" }
            let table = TextTable(fields.map { TextTable.Column(String($0.uppercased().map { $0 == "_" ? " " : $0 }), maxWidth: 40) })
            return table.render(records.map { record in fields.map { record[$0]?.text } }).joined(separator: "\n")
        }
        return switch command {
        case "pin": "pinned \(address)"
        case "unpin": "unpinned \(address)"
        case "disconnect": "disconnected \(address); it stays disconnected until 'wearfleetctl reconnect \(address)'"
        case "reconnect": "reconnecting \(address) now (backoff and give-up cleared)"
        case "read": value ?? ""
        case "subscribe": "subscribed to \(uuid ?? "") of \(address)"
        case "unsubscribe": "unsubscribed from \(uuid ?? "") of \(address)"
        case "write": "\(outcome ?? "written"): \(bytes ?? 0) \(bytes == 1 ? "byte" : "bytes") to \(uuid ?? "") of \(address)"
        default: "\(command) \(address): done"
        }
    }

    public func json() throws -> String {
        try ControlJSON.encode(self)
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion, command, address, ok, uuid, value, bytes, qos, outcome, records
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ControlJSON.schemaVersion, forKey: .schemaVersion)
        try container.encode(command, forKey: .command)
        // A command about no device (`nearby`) has no address.
        if !address.isEmpty { try container.encode(address, forKey: .address) }
        try container.encode(true, forKey: .ok)
        try container.encodeIfPresent(uuid, forKey: .uuid)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(bytes, forKey: .bytes)
        try container.encodeIfPresent(qos, forKey: .qos)
        try container.encodeIfPresent(outcome, forKey: .outcome)
        if let records { try container.encode(records.map(RecordJSON.init), forKey: .records) }
    }

    /// Lower-case hex, two digits a byte.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Bytes from hex text (`0a1B`, also with `:`, `-` or spaces between bytes); nil for anything else.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = text.filter { $0 != ":" && $0 != "-" && $0 != " " }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

extension ControlCommandResult {
    /// What wearfleetctl prints for `command`, answered `outcome`: the address and UUID as they
    /// were typed (`words`), the bytes written and the QoS asked for.
    public init(_ command: CheckedCommand, words: [String: String], outcome: CommandOutcome) {
        let value: [UInt8]? = if case .bytes(let bytes) = outcome { bytes } else { nil }
        let word: String? = if case .word(let word) = outcome { word } else { nil }
        defer {
            if case .records(let records) = outcome, case .records(_, _, let fields, _) = command.declaration.result {
                self.records = records
                self.recordFields = fields
            }
        }
        self.init(
            command: command.name.rawValue, address: words["address"] ?? command.address?.description ?? "",
            uuid: words["uuid"] ?? command.uuid("uuid"), value: value, bytes: command.bytes("value")?.count,
            qos: command.given["qos"].map(\.text), outcome: word)
    }
}

/// A record in `--json`: its fields as JSON members, in order.
struct RecordJSON: Encodable {
    let record: CommandRecord

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in record.fields {
            switch value {
            case .string(let text): try container.encode(text, forKey: Key(stringValue: key))
            case .integer(let number): try container.encode(number, forKey: Key(stringValue: key))
            case .number(let number): try container.encode(number, forKey: Key(stringValue: key))
            case .bool(let flag): try container.encode(flag, forKey: Key(stringValue: key))
            case .strings(let texts): try container.encode(texts, forKey: Key(stringValue: key))
            }
        }
    }
}
