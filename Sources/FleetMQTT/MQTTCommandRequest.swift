import FleetConfiguration
import FleetCore
import FoundationEssentials
import GATT

/// One request from `<prefix>/device/<ADDR>/command`, checked before anything is asked of the
/// fleet: a JSON object with `id` (a string or a number, echoed in the result) and `op`, plus the
/// op's arguments and nothing else.
///
/// | op | arguments |
/// |---|---|
/// | `write` | `characteristic` (UUID), `hex` (the bytes), optional `mode` (`request`, `command`, `auto`), `qos` (`control`, `normal`, `bulk`), `replace` (bool) |
/// | `read`, `subscribe`, `unsubscribe` | `characteristic` |
/// | `disconnect`, `reconnect`, `unpin` | — |
/// | `pin` | optional `class`, `priority` (integer), `name`, `address_type` |
public struct MQTTCommandRequest: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        /// `replace`: may replace a still-queued `replace` write to the characteristic within the
        /// class's `coalescing_window` (only the newest value matters).
        case write(characteristic: String, bytes: [UInt8], mode: OutgoingWriteMode, qos: OutgoingQoS?, replace: Bool = false)
        case read(characteristic: String)
        case subscribe(characteristic: String)
        case unsubscribe(characteristic: String)
        case disconnect, reconnect, unpin
        /// `addressType`: the device's (`address_type`: public or random) when the fleet does
        /// not know it yet; nil is public, as on D-Bus.
        case pin(FleetPinOptions, addressType: AddressType?)

        public var op: MQTTSettings.CommandOp {
            switch self {
            case .write: .write
            case .read: .read
            case .disconnect: .disconnect
            case .reconnect: .reconnect
            case .unpin: .unpin
            case .pin: .pin
            case .subscribe: .subscribe
            case .unsubscribe: .unsubscribe
            }
        }
    }

    /// The request's `id` as it came: a JSON string or number (its text), echoed unchanged.
    public enum Identifier: Sendable, Equatable {
        case string(String)
        case number(String)
    }

    public var id: Identifier
    public var operation: Operation

    /// A request refused before it reached the fleet: with the `id` when one could be read.
    public struct Rejection: Error, Sendable, Equatable {
        public var id: Identifier?
        public var op: String?
        public var message: String
    }

    /// Parses `payload`; never throws anything but a `Rejection`.
    public static func parse(_ payload: [UInt8]) throws(Rejection) -> MQTTCommandRequest {
        guard payload.count <= 16_384 else { throw Rejection(id: nil, op: nil, message: "request larger than 16384 bytes") }
        let fields: [String: JSONField]
        do {
            fields = try JSONDecoder().decode([String: JSONField].self, from: Data(payload))
        } catch {
            throw Rejection(id: nil, op: nil, message: "not a JSON object")
        }
        var id: Identifier?
        switch fields["id"] {
        case .string(let text)?: id = .string(text)
        case .number(let text)?: id = .number(text)
        case nil: throw Rejection(id: nil, op: nil, message: "'id' is missing")
        default: throw Rejection(id: nil, op: nil, message: "'id' must be a string or a number")
        }
        guard let identifier = id else { throw Rejection(id: nil, op: nil, message: "'id' is missing") }
        func reject(_ message: String, op: String? = nil) -> Rejection { Rejection(id: identifier, op: op, message: message) }
        guard case .string(let opText)? = fields["op"] else { throw reject("'op' must be a string") }
        guard let op = MQTTSettings.CommandOp(rawValue: opText) else {
            throw reject("unknown op \"\(opText)\" (known: \(MQTTSettings.CommandOp.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        var arguments = fields
        arguments["id"] = nil
        arguments["op"] = nil
        let allowed: Set<String> = switch op {
        case .write: ["characteristic", "hex", "mode", "qos", "replace"]
        case .read, .subscribe, .unsubscribe: ["characteristic"]
        case .disconnect, .reconnect, .unpin: []
        case .pin: ["class", "priority", "name", "address_type"]
        }
        if let unexpected = arguments.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw reject("\(opText) takes no argument '\(unexpected)'", op: opText)
        }
        func string(_ key: String, required: Bool) throws(Rejection) -> String? {
            switch arguments[key] {
            case .string(let text)?: return text
            case nil where !required: return nil
            case nil: throw reject("\(opText) needs '\(key)'", op: opText)
            default: throw reject("'\(key)' must be a string", op: opText)
            }
        }
        let operation: Operation
        switch op {
        case .write:
            let characteristic = try string("characteristic", required: true) ?? ""
            guard BluetoothUUID(characteristic) != nil else { throw reject("'characteristic' is not a UUID: \"\(characteristic)\"", op: opText) }
            let hex = try string("hex", required: true) ?? ""
            guard let bytes = Self.bytes(hex: hex) else { throw reject("'hex' must be an even number of hex digits", op: opText) }
            guard !bytes.isEmpty else { throw reject("'hex' holds no bytes", op: opText) }
            let mode: OutgoingWriteMode
            switch try string("mode", required: false) {
            case nil, "auto"?: mode = .automatic
            case "request"?: mode = .withResponse
            case "command"?: mode = .withoutResponse
            case let other?: throw reject("'mode' must be request, command or auto, found \"\(other)\"", op: opText)
            }
            var qos: OutgoingQoS?
            if let text = try string("qos", required: false) {
                guard let value = OutgoingQoS.allCases.first(where: { $0.description == text }) else {
                    throw reject("'qos' must be control, normal or bulk, found \"\(text)\"", op: opText)
                }
                qos = value
            }
            let replace: Bool
            switch arguments["replace"] {
            case nil: replace = false
            case .bool(let flag)?: replace = flag
            default: throw reject("'replace' must be true or false", op: opText)
            }
            operation = .write(characteristic: characteristic, bytes: bytes, mode: mode, qos: qos, replace: replace)
        case .read:
            let characteristic = try string("characteristic", required: true) ?? ""
            guard BluetoothUUID(characteristic) != nil else { throw reject("'characteristic' is not a UUID: \"\(characteristic)\"", op: opText) }
            operation = .read(characteristic: characteristic)
        case .subscribe, .unsubscribe:
            let characteristic = try string("characteristic", required: true) ?? ""
            guard BluetoothUUID(characteristic) != nil else { throw reject("'characteristic' is not a UUID: \"\(characteristic)\"", op: opText) }
            operation = op == .subscribe ? .subscribe(characteristic: characteristic) : .unsubscribe(characteristic: characteristic)
        case .disconnect: operation = .disconnect
        case .reconnect: operation = .reconnect
        case .unpin: operation = .unpin
        case .pin:
            var options = FleetPinOptions()
            options.className = try string("class", required: false)
            options.name = try string("name", required: false)
            switch arguments["priority"] {
            case nil: break
            case .number(let text)?:
                guard let value = Int(text), FleetPinOptions.priorities.contains(value) else {
                    throw reject("'priority' must be \(FleetPinOptions.prioritiesText)", op: opText)
                }
                options.priority = value
            default: throw reject("'priority' must be an integer", op: opText)
            }
            // The limits every outlet applies (the fleet machine checks them again).
            if let problem = options.problem { throw reject(problem, op: opText) }
            var addressType: AddressType?
            if let text = try string("address_type", required: false) {
                guard let type = AddressType(rawValue: text) else {
                    throw reject("'address_type' must be public or random, found \"\(text.prefix(32))\"", op: opText)
                }
                addressType = type
            }
            operation = .pin(options, addressType: addressType)
        }
        return MQTTCommandRequest(id: identifier, operation: operation)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2), digits.count <= 1024 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
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
        } else if let double = try? container.decode(Double.self), double.isFinite {
            self = .number(String(double))
        } else {
            self = .other
        }
    }
}

/// The answer on `…/command/result`: `{"id":…,"op":…,"ok":true,…}` or `{"id":…,"ok":false,"error":…}`.
enum MQTTCommandResult {
    static func success(_ id: MQTTCommandRequest.Identifier, op: String, extra: (inout JSONObjectWriter) -> Void = { _ in }) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 96)
        write(id, into: &object)
        object.string("op", op)
        object.bool("ok", true)
        extra(&object)
        return object.finish()
    }

    static func failure(_ id: MQTTCommandRequest.Identifier?, op: String?, error: String) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 128)
        // Without a readable id the result has none: the requester matches it by its absence.
        if let id { write(id, into: &object) }
        if let op { object.string("op", op) }
        object.bool("ok", false)
        object.string("error", error)
        return object.finish()
    }

    private static func write(_ id: MQTTCommandRequest.Identifier, into object: inout JSONObjectWriter) {
        switch id {
        case .string(let text): object.string("id", text)
        case .number(let text): object.number("id", text)
        }
    }
}
