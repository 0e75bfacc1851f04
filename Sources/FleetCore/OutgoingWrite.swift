/// A write a sender asks the scheduler to deliver to one characteristic of one device.
public struct OutgoingWrite: Hashable, Sendable {
    public var characteristic: OutgoingCharacteristic
    public var bytes: [UInt8]
    public var qos: OutgoingQoS
    public var mode: OutgoingWriteMode
    /// The value supersedes earlier values of the same characteristic (a setting, a state), so a
    /// still-queued earlier value may be replaced by it within the device's coalescing window.
    /// False by default: commands and appends must never be.
    public var isReplaceable: Bool

    public init(
        characteristic: OutgoingCharacteristic,
        bytes: [UInt8],
        qos: OutgoingQoS = .normal,
        mode: OutgoingWriteMode = .automatic,
        isReplaceable: Bool = false
    ) {
        self.characteristic = characteristic
        self.bytes = bytes
        self.qos = qos
        self.mode = mode
        self.isReplaceable = isReplaceable
    }
}

// MARK: -

/// The characteristic an outgoing write goes to, as the scheduler needs it: a stable identity
/// (the runtime chooses it, e.g. the BlueZ object path) and its write flags.
public struct OutgoingCharacteristic: Hashable, Sendable, CustomStringConvertible {
    public var id: String
    public var properties: OutgoingWriteProperties

    public init(id: String, properties: OutgoingWriteProperties) {
        self.id = id
        self.properties = properties
    }

    public var description: String { id }
}

// MARK: -

/// The write-related flags of a GATT characteristic (`GattCharacteristic1.Flags`: `write`,
/// `write-without-response`).
public struct OutgoingWriteProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let write = OutgoingWriteProperties(rawValue: 1 << 0)
    public static let writeWithoutResponse = OutgoingWriteProperties(rawValue: 1 << 1)
}

// MARK: -

/// What the sender asks for; the scheduler resolves it to an `OutgoingWriteType` at enqueue time.
///
/// `automatic` follows one rule: `control` writes go with response when the characteristic allows
/// it (a command should be acknowledged), everything else goes without response when allowed
/// (throughput); either falls back to the other type when only that one is allowed.
public enum OutgoingWriteMode: Hashable, Sendable {
    case withResponse
    case withoutResponse
    case automatic

    /// The write type for `qos` on a characteristic with `properties`, or nil if it cannot be
    /// written that way.
    public func resolve(qos: OutgoingQoS, properties: OutgoingWriteProperties) -> OutgoingWriteType? {
        let acked = properties.contains(.write)
        let unacked = properties.contains(.writeWithoutResponse)
        switch self {
        case .withResponse: return acked ? .withResponse : nil
        case .withoutResponse: return unacked ? .withoutResponse : nil
        case .automatic:
            if qos == .control { return acked ? .withResponse : (unacked ? .withoutResponse : nil) }
            return unacked ? .withoutResponse : (acked ? .withResponse : nil)
        }
    }
}

// MARK: -

/// How a write goes over the air. With response, the device acknowledges each write and only
/// `maxInFlightWithResponse` may be outstanding; without response, each write spends one credit.
public enum OutgoingWriteType: Hashable, Sendable {
    case withResponse
    case withoutResponse
}

// MARK: -

/// The class of service of an outgoing write. Inside one device, classes are served in this
/// order (control first), with an anti-starvation rule so bulk still moves under steady control
/// and normal traffic (see `OutgoingConfiguration.starvationLimit`).
public enum OutgoingQoS: Int, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Commands and acknowledgements: small, rare, latency-sensitive, never coalesced.
    case control = 0
    /// Ordinary application writes.
    case normal = 1
    /// Large transfers (firmware chunks, logs) that may wait.
    case bulk = 2

    public static func < (lhs: OutgoingQoS, rhs: OutgoingQoS) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .control: "control"
        case .normal: "normal"
        case .bulk: "bulk"
        }
    }
}

// MARK: -

/// What `OutgoingScheduler.enqueue` did with an accepted write.
public enum OutgoingEnqueueResult: Hashable, Sendable {
    /// Appended to its queue.
    case queued
    /// Replaced the value of a queued write to the same characteristic (coalescing window): the
    /// write that goes out is that one, whose sequence it keeps (`into`).
    case coalesced(into: UInt64)

    public var wasCoalesced: Bool {
        if case .coalesced = self { true } else { false }
    }
}
