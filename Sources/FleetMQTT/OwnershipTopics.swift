import FleetCore

/// Where gateways that share one fleet agree on who connects each device (ARCHITECTURE.md,
/// "Several gateways: ownership through the broker"), under the same `topic_prefix` as the rest
/// of the daemon's topics:
///
/// - `<prefix>/device/<ADDR>/owner`, retained, QoS 1: `OwnerClaim`.
/// - `<prefix>/gateway/<id>/alive`, not retained: `GatewayLiveness` (the heartbeat).
/// - `<prefix>/gateway/<id>/bids`, retained: `OwnershipBids`.
/// - `<prefix>/gateway/<id>/status`: the gateway's `online`/`offline` (`MQTTTopics.gatewayStatus`),
///   whose `offline` is also its Last Will; read here as a peer's liveness.
public struct OwnershipTopics: Sendable, Equatable {
    public let prefix: String
    /// This gateway's id as one topic level (`MQTTTopics.gatewayID`).
    public let gatewayID: String

    public init(prefix: String, gatewayID: String) {
        self.prefix = prefix
        self.gatewayID = gatewayID
    }

    public init(_ topics: MQTTTopics) {
        self.init(prefix: topics.prefix, gatewayID: topics.gatewayID)
    }

    public var gateway: GatewayID { GatewayID(gatewayID) }

    /// The device's claim topic. The topic level is the address alone (`MQTTTopics.segment`), so
    /// the claim's `dev` field carries the address type.
    public func owner(_ device: DeviceID) -> String { "\(prefix)/device/\(MQTTTopics.segment(device))/owner" }
    public var alive: String { "\(prefix)/gateway/\(gatewayID)/alive" }
    public var bids: String { "\(prefix)/gateway/\(gatewayID)/bids" }
    public var status: String { "\(prefix)/gateway/\(gatewayID)/status" }

    /// The filters the connection must subscribe to (`MQTTConnectionSettings.subscriptions`):
    /// every gateway's messages, this one's own included (the machine waits for its own claims
    /// to come back before it links).
    public var subscriptions: [String] {
        ["\(prefix)/device/+/owner", "\(prefix)/gateway/+/alive", "\(prefix)/gateway/+/bids", "\(prefix)/gateway/+/status"]
    }

    /// What an incoming topic is, as far as ownership is concerned.
    public enum Kind: Sendable, Equatable {
        /// A device's claim; the 12 hex digits of its address.
        case owner(segment: String)
        case alive(GatewayID)
        case bids(GatewayID)
        case status(GatewayID)
    }

    /// The kind of `topic`, nil for a topic that is not an ownership topic (commands, states…).
    /// Cheap and non-isolated, so a router can decide without a hop onto the coordinator.
    public func kind(of topic: String) -> Kind? {
        let head = prefix + "/"
        guard topic.hasPrefix(head) else { return nil }
        let levels = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, !levels[1].isEmpty else { return nil }
        let middle = String(levels[1])
        switch (levels[0], levels[2]) {
        case ("device", "owner"):
            guard middle.count == 12, middle.allSatisfy(\.isHexDigit) else { return nil }
            return .owner(segment: middle)
        case ("gateway", "alive"): return .alive(GatewayID(middle))
        case ("gateway", "bids"): return .bids(GatewayID(middle))
        case ("gateway", "status"): return .status(GatewayID(middle))
        default: return nil
        }
    }
}
