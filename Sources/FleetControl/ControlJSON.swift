import FoundationEssentials

// `wearfleetctl status --json` and `device ADDRESS --json`. The schema is documented in README
// ("wearfleetctl"): every key is always present (null when unknown), keys are sorted, and a
// change that is not backwards compatible raises `schemaVersion`.

/// The stable JSON forms of the control interface's answers.
public enum ControlJSON {
    /// Raised when the output changes incompatibly (a key removed, renamed or retyped).
    public static let schemaVersion = 1

    /// The whole fleet: the status fields, `adapters` and `devices`.
    public static func status(_ status: ControlStatus) throws -> String {
        try encode(StatusDocument(status: status))
    }

    /// One device: the same object as an element of `status`'s `devices`.
    public static func device(_ device: ControlDevice) throws -> String {
        try encode(device)
    }

    /// Every `--json` document's form: pretty, keys sorted, slashes left alone.
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private struct StatusDocument: Encodable {
        let status: ControlStatus

        enum CodingKeys: String, CodingKey {
            case schemaVersion, version, bluetoothdPresent, summary, pinnedReady, pinnedTotal, poolConnected, deviceCount
            case adapters, devices
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ControlJSON.schemaVersion, forKey: .schemaVersion)
            try container.encode(status.version, forKey: .version)
            try container.encode(status.bluetoothdPresent, forKey: .bluetoothdPresent)
            try container.encode(status.summary, forKey: .summary)
            try container.encode(status.pinnedReady, forKey: .pinnedReady)
            try container.encode(status.pinnedTotal, forKey: .pinnedTotal)
            try container.encode(status.poolConnected, forKey: .poolConnected)
            try container.encode(status.deviceCount, forKey: .deviceCount)
            try container.encode(status.adapters, forKey: .adapters)
            try container.encode(status.devices, forKey: .devices)
        }
    }
}

extension ControlAdapter: Encodable {
    enum CodingKeys: String, CodingKey { case id, powered, slots, used, discovering }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(powered, forKey: .powered)
        try container.encode(slots, forKey: .slots)
        try container.encode(used, forKey: .used)
        try container.encode(discovering, forKey: .discovering)
    }
}

extension ControlDevice: Encodable {
    enum CodingKeys: String, CodingKey {
        case address, addressType, name, pinned
        case className = "class"
        case state, stateReason, retryAttempt
        case nextAttemptIn = "nextAttemptInSeconds"
        case adapter, rssi, lastValue, lastValueTime, sessions, reconnects, notifications, decodeErrors, lastError, owner
    }

    /// Optional values are written as null rather than left out, so every key is always there.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(addressType, forKey: .addressType)
        try container.encode(name, forKey: .name)
        try container.encode(pinned, forKey: .pinned)
        try container.encode(className, forKey: .className)
        try container.encode(state, forKey: .state)
        try container.encode(stateReason, forKey: .stateReason)
        try container.encode(retryAttempt, forKey: .retryAttempt)
        // Milliseconds are all a reader can use; fewer digits keep the output stable to diff.
        try container.encode(nextAttemptIn.map { ($0 * 1000).rounded() / 1000 }, forKey: .nextAttemptIn)
        try container.encode(adapter, forKey: .adapter)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(lastValue, forKey: .lastValue)
        try container.encode(lastValueTime.map(Self.utcText), forKey: .lastValueTime)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(reconnects, forKey: .reconnects)
        try container.encode(notifications, forKey: .notifications)
        try container.encode(decodeErrors, forKey: .decodeErrors)
        try container.encode(lastError, forKey: .lastError)
        try container.encode(owner, forKey: .owner)
    }
}

extension ControlDevice {
    /// `2026-11-29T06:40:12Z`: seconds since 1970 as RFC 3339 UTC, to the second.
    static func utcText(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds.rounded(.down)).formatted(.iso8601)
    }

    /// The last value's time for people: UTC, to the second.
    public var lastValueTimeText: String? { lastValueTime.map(Self.utcText) }
}
