import FleetControl
import FleetCore
import FoundationEssentials
import GATT

/// One request from the broker, read as far as JSON goes: its identifier, its op and its
/// arguments as raw values. What the arguments mean is the command catalogue's to say
/// (`checked`, through `CommandArgumentChecker`), as it is for D-Bus and wearfleetctl.
///
/// - Device scope, `<prefix>/device/<ADDR>/command`: `{"id":…,"op":…, arguments…}`; the device
///   is the topic's, `id` is required and echoed on `…/command/result`.
/// - Gateway scope, `<prefix>/gateway/<id>/request/<op>`: `{"transaction":…, arguments…}`; the op
///   is the topic's, `transaction` is optional and echoed on `…/response/<op>`.
public struct MQTTCommandRequest: Sendable, Equatable {
    /// The request's `id` or `transaction` as it came: a JSON string or number (its text),
    /// echoed unchanged.
    public enum Identifier: Sendable, Equatable {
        case string(String)
        case number(String)
    }

    public var id: Identifier?
    public var op: String
    /// The arguments by their JSON keys.
    public var arguments: [String: RawCommandValue]

    /// A request refused before it reached the fleet: with the `id` and op when they could be read.
    public struct Rejection: Error, Sendable, Equatable {
        public var id: Identifier?
        public var op: String?
        public var message: String
    }

    /// The largest request read.
    static let maximumBytes = 16_384

    /// A device-scope request; never throws anything but a `Rejection`.
    public static func parse(_ payload: [UInt8]) throws(Rejection) -> MQTTCommandRequest {
        var fields = try object(payload)
        let id: Identifier
        switch fields.removeValue(forKey: "id") {
        case .string(let text)?: id = .string(text)
        case .number(let text)?: id = .number(text)
        case nil: throw Rejection(id: nil, op: nil, message: "'id' is missing")
        default: throw Rejection(id: nil, op: nil, message: "'id' must be a string or a number")
        }
        guard case .string(let op)? = fields.removeValue(forKey: "op") else {
            throw Rejection(id: id, op: nil, message: "'op' must be a string")
        }
        return MQTTCommandRequest(id: id, op: op, arguments: fields.mapValues(\.raw))
    }

    /// A gateway-scope request for `op` (the topic's last level).
    public static func parseGateway(_ payload: [UInt8], op: String) throws(Rejection) -> MQTTCommandRequest {
        // An empty message is a request without arguments.
        var fields = payload.isEmpty ? [:] : try object(payload)
        var id: Identifier?
        switch fields.removeValue(forKey: "transaction") {
        case .string(let text)?: id = .string(text)
        case .number(let text)?: id = .number(text)
        case nil: id = nil
        default: throw Rejection(id: nil, op: op, message: "'transaction' must be a string or a number")
        }
        return MQTTCommandRequest(id: id, op: op, arguments: fields.mapValues(\.raw))
    }

    /// The request checked against the catalogue at `scope`: the device scope's address is
    /// `device` (the topic's).
    public func checked(scope: CommandDeclaration.Scopes, device: BluetoothAddress? = nil) throws(Rejection) -> CheckedCommand {
        let known = CommandCatalogue.all.filter { $0.scopes.contains(scope) }
        guard let declaration = known.first(where: { $0.op == op }) else {
            throw Rejection(id: id, op: op, message: "unknown op \"\(op.prefix(32))\" (known: \(known.map(\.op).joined(separator: ", ")))")
        }
        let implied: [String: CommandValue] = device.map { ["address": .address($0)] } ?? [:]
        do {
            return try CommandArgumentChecker.check(declaration, arguments, on: .mqtt, implied: implied)
        } catch {
            throw Rejection(id: id, op: op, message: error.description)
        }
    }

    /// Bytes from hex text, as the checker reads them.
    static func bytes(hex: String) -> [UInt8]? {
        CommandArgumentChecker.bytes(hex: hex)
    }

    private static func object(_ payload: [UInt8]) throws(Rejection) -> [String: JSONField] {
        guard payload.count <= maximumBytes else {
            throw Rejection(id: nil, op: nil, message: "request larger than \(maximumBytes) bytes")
        }
        do {
            return try JSONDecoder().decode([String: JSONField].self, from: Data(payload))
        } catch {
            throw Rejection(id: nil, op: nil, message: "not a JSON object")
        }
    }
}

/// One JSON value of a request, as far as requests need to tell them apart: numbers keep their text.
enum JSONField: Decodable, Equatable {
    case string(String)
    case number(String)
    case bool(Bool)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(String(integer))
        } else if let integer = try? container.decode(UInt64.self) {
            self = .number(String(integer))
        } else if let decimal = try? container.decode(Decimal.self), !decimal.isNaN, decimal.isFinite,
            let digits = Self.exactIntegerText(decimal)
        {
            // An integer beyond 64 bits (a caller's transaction id): its digits as sent, not a
            // Double's rounding of them.
            self = .number(digits)
        } else if let double = try? container.decode(Double.self), double.isFinite {
            self = .number(String(double))
        } else {
            self = .other
        }
    }

    /// The digits of an integral `decimal` (Decimal keeps 38 of them), nil for a fraction.
    private static func exactIntegerText(_ decimal: Decimal) -> String? {
        let text = "\(decimal)"
        guard text.drop(while: { $0 == "-" }).allSatisfy(\.isASCIIDigitCharacter), text.contains(where: \.isNumber) else { return nil }
        return text
    }

    /// The value as the checker takes it.
    var raw: RawCommandValue {
        switch self {
        case .string(let text): .text(text)
        case .number(let text): .number(text)
        case .bool(let flag): .bool(flag)
        case .other: .other("an array, an object or null")
        }
    }
}

/// The answer on `…/command/result`: `{"id":…,"op":…,"ok":true,…}` or `{"id":…,"ok":false,"error":…}`.
enum MQTTCommandResult {
    static func success(_ id: MQTTCommandRequest.Identifier?, op: String, extra: (inout JSONObjectWriter) -> Void = { _ in }) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 96)
        if let id { write(id, key: "id", into: &object) }
        object.string("op", op)
        object.bool("ok", true)
        extra(&object)
        return object.finish()
    }

    static func failure(_ id: MQTTCommandRequest.Identifier?, op: String?, error: String) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 128)
        // Without a readable id the result has none: the requester matches it by its absence.
        if let id { write(id, key: "id", into: &object) }
        if let op { object.string("op", op) }
        object.bool("ok", false)
        object.string("error", error)
        return object.finish()
    }

    /// The outcome's value under the declaration's key (`"hex"`, `"write"`).
    static func write(_ outcome: CommandOutcome, of declaration: CommandDeclaration, into object: inout JSONObjectWriter) {
        switch (declaration.result, outcome) {
        case (.bytes(_, let key, _), .bytes(let bytes)): object.hex(key, bytes)
        case (.word(_, let key, _), .word(let word)): object.string(key, word)
        case (.records(_, let key, _, _), .records(let records)): object.objects(key, records.map(json))
        default: break
        }
    }

    /// A record as a JSON object: its fields in order.
    static func json(_ record: CommandRecord) -> JSONObjectWriter {
        var object = JSONObjectWriter(capacity: 192)
        for (key, value) in record.fields {
            switch value {
            case .string(let text): object.string(key, text)
            case .integer(let number): object.integer(key, number)
            case .number: object.number(key, value.text)
            case .bool(let flag): object.bool(key, flag)
            case .strings(let texts): object.strings(key, texts)
            }
        }
        return object
    }

    static func write(_ id: MQTTCommandRequest.Identifier, key: String, into object: inout JSONObjectWriter) {
        switch id {
        case .string(let text): object.string(key, text)
        case .number(let text): object.number(key, text)
        }
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
