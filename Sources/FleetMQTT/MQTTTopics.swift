import FleetCore

/// Every topic the daemon publishes to or reads, from `topic_prefix`, `gateway_id` and
/// `discovery_prefix` (README, "MQTT").
public struct MQTTTopics: Sendable, Equatable {
    public let prefix: String
    public let gatewayID: String
    public let discoveryPrefix: String

    public init(prefix: String, gatewayID: String, discoveryPrefix: String) {
        self.prefix = prefix
        self.gatewayID = gatewayID
        self.discoveryPrefix = discoveryPrefix
    }

    /// `online` (retained) while the daemon runs, `offline` after a clean stop or as the Will.
    public var gatewayStatus: String { "\(prefix)/gateway/\(gatewayID)/status" }
    /// The gateway API (Zigbee2MQTT's `bridge/…` shape): retained `info` (version, adapters,
    /// allowed commands, configuration), retained `devices` (every fleet device) and `event`
    /// (devices added, removed, pinned, unpinned, held, released).
    public var gatewayInfo: String { "\(prefix)/gateway/\(gatewayID)/info" }
    public var gatewayDevices: String { "\(prefix)/gateway/\(gatewayID)/devices" }
    public var gatewayEvent: String { "\(prefix)/gateway/\(gatewayID)/event" }
    /// Subscribed: commands for any device.
    public var commandFilter: String { "\(prefix)/device/+/command" }
    /// Subscribed: Home Assistant's birth message (`online`) asks for discovery again.
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }

    /// `C0FFEE000001`: the address upper case without colons, one topic level.
    public static func segment(_ device: DeviceID) -> String {
        device.address.description.uppercased().filter { $0 != ":" }
    }

    public func device(_ device: DeviceID) -> String { "\(prefix)/device/\(Self.segment(device))" }
    public func state(_ device: DeviceID) -> String { "\(self.device(device))/state" }
    /// Where the device's commands are published (subscribed through `commandFilter`).
    public func command(_ device: DeviceID) -> String { "\(self.device(device))/command" }
    public func commandResult(_ segment: String) -> String { "\(prefix)/device/\(segment)/command/result" }

    /// `…/<kind>`, or `…/raw/<uuid>` and `…/invalid/<uuid>`, whose values are only told apart
    /// by their characteristic.
    public func value(_ device: DeviceID, kind: String, characteristic: String) -> String {
        kind == "raw" || kind == "invalid" ? "\(self.device(device))/\(kind)/\(characteristic)" : "\(self.device(device))/\(kind)"
    }

    /// The kinds a device measures now and then (a cuff's pressure, a scale's weight), not as a
    /// stream: each value goes to its value topic like any other, and also, retained, to
    /// `…/<kind>/latest`, so that a consumer that starts (or restarts) while the device sleeps
    /// still has its latest measurement.
    public static let occasionalKinds: Set<String> = ["blood_pressure", "weight"]

    /// `…/<kind>/latest` (retained): the latest value of an occasional kind.
    public func latestValue(_ device: DeviceID, kind: String) -> String { "\(self.device(device))/\(kind)/latest" }

    /// Every retained latest-value topic a device may have.
    public func latestValues(of device: DeviceID) -> [String] {
        Self.occasionalKinds.sorted().map { latestValue(device, kind: $0) }
    }

    /// The ADDR segment of a command topic, nil for any other topic.
    public func commandDevice(in topic: String) -> String? {
        let head = "\(prefix)/device/"
        guard topic.hasPrefix(head), topic.hasSuffix("/command") else { return nil }
        let segment = topic.dropFirst(head.count).dropLast("/command".count)
        guard segment.count == 12, segment.allSatisfy(\.isHexDigit) else { return nil }
        return String(segment)
    }

    /// Home Assistant's config topic for one entity: `<discovery>/<component>/wearfleet_<ADDR>/<object>/config`.
    public func discovery(component: String, node: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(node)/\(object)/config"
    }

    // MARK: - Gateway requests

    /// Subscribed: gateway-scope requests, one topic level per op (`…/request/pin`).
    public var gatewayRequestFilter: String { "\(prefix)/gateway/\(gatewayID)/request/+" }

    /// The answer to a gateway request for `op`.
    public func gatewayResponse(_ op: String) -> String { "\(prefix)/gateway/\(gatewayID)/response/\(op)" }

    /// The op of a gateway request's topic, nil for any other topic.
    public func gatewayRequestOp(in topic: String) -> String? {
        let head = "\(prefix)/gateway/\(gatewayID)/request/"
        guard topic.hasPrefix(head) else { return nil }
        let op = topic.dropFirst(head.count)
        guard !op.isEmpty, !op.contains("/") else { return nil }
        return String(op)
    }
}

extension BluetoothAddress {
    /// The address from a topic's 12 hex digits (`C0FFEE000001`).
    init?(topicSegment segment: String) {
        guard segment.count == 12 else { return nil }
        var text = ""
        for (index, character) in segment.enumerated() {
            if index > 0, index % 2 == 0 { text.append(":") }
            text.append(character)
        }
        self.init(text)
    }
}
