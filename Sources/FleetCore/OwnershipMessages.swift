// What gateways that share one fleet tell each other through the MQTT broker, as typed values.
// The runtime maps them onto topics and JSON; `OwnershipMachine` produces and consumes them and
// never sees a topic or a byte. JSON field names are short because every gateway receives every
// gateway's messages, and stable because gateways of different versions share one broker: add
// fields as optional ones, never rename.

/// One gateway (one wearfleetd) among several that hear the same devices, by the name it is
/// configured with.
///
/// Ordered by name: wherever two gateways tie (a claim of the same epoch, an equal bid), the
/// greater name wins, so every gateway breaks the tie the same way. Encoded as the bare name.
public struct GatewayID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    public var description: String { name }

    public static func < (lhs: GatewayID, rhs: GatewayID) -> Bool { lhs.name < rhs.name }
}

/// Which gateway connects a device: the retained record of `<prefix>/device/<ADDR>/owner`.
///
/// Claims are ordered by `precedence` — epoch, then gateway (a release, `gateway == nil`, below
/// every gateway), then revision — and every gateway keeps the greatest it has seen, so all of
/// them agree on the owner whatever order the broker delivers claims in. `linked` says whether
/// the named gateway holds the device's link; `revision` orders the named gateway's own updates
/// of `linked` within one epoch, so a late copy of an older update cannot undo a newer one.
///
/// JSON: `{"dev":"AA:BB:CC:DD:EE:FF","gw":"hall","ep":7,"rev":1,"linked":true}`; `gw` is absent
/// for a release, and a missing `rev` reads as 0.
public struct OwnerClaim: Hashable, Sendable, Codable, CustomStringConvertible {
    public var device: DeviceID
    /// The owner; nil when the device was released (nobody connects it until someone claims it).
    public var gateway: GatewayID?
    public var epoch: UInt64
    public var revision: UInt64
    public var linked: Bool

    public init(device: DeviceID, gateway: GatewayID?, epoch: UInt64, revision: UInt64 = 0, linked: Bool) {
        self.device = device
        self.gateway = gateway
        self.epoch = epoch
        self.revision = revision
        self.linked = linked
    }

    /// The order of claims for one device: the greater claim wins.
    public struct Precedence: Hashable, Comparable, Sendable {
        public var epoch: UInt64
        public var gateway: GatewayID?
        public var revision: UInt64

        public static func < (lhs: Precedence, rhs: Precedence) -> Bool {
            if lhs.epoch != rhs.epoch { return lhs.epoch < rhs.epoch }
            if lhs.gateway != rhs.gateway {
                guard let left = lhs.gateway else { return true }
                guard let right = rhs.gateway else { return false }
                return left < right
            }
            return lhs.revision < rhs.revision
        }
    }

    public var precedence: Precedence { Precedence(epoch: epoch, gateway: gateway, revision: revision) }

    /// Whether `other` is the same claim (same epoch, same gateway), whatever its revision.
    public func isSameClaim(as other: OwnerClaim) -> Bool { epoch == other.epoch && gateway == other.gateway }

    public var description: String {
        "\(device) → \(gateway?.name ?? "nobody") epoch \(epoch).\(revision)\(linked ? " linked" : "")"
    }

    private enum CodingKeys: String, CodingKey {
        case device = "dev", gateway = "gw", epoch = "ep", revision = "rev", linked
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            device: try values.decode(DeviceID.self, forKey: .device),
            gateway: try values.decodeIfPresent(GatewayID.self, forKey: .gateway),
            epoch: try values.decode(UInt64.self, forKey: .epoch),
            revision: try values.decodeIfPresent(UInt64.self, forKey: .revision) ?? 0,
            linked: try values.decode(Bool.self, forKey: .linked))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(device, forKey: .device)
        try values.encodeIfPresent(gateway, forKey: .gateway)
        try values.encode(epoch, forKey: .epoch)
        try values.encode(revision, forKey: .revision)
        try values.encode(linked, forKey: .linked)
    }
}

/// How much a gateway wants to connect one device: higher is better (see `OwnershipScoring`).
public struct OwnershipBid: Hashable, Sendable, Codable {
    public var score: Double

    public init(score: Double) { self.score = score }

    private enum CodingKeys: String, CodingKey { case score = "s" }
}

/// One gateway's bids for every device it hears, as one message on the gateway's own topic.
///
/// Each message is the whole set: a device missing from it is one the gateway no longer hears.
/// It should be published retained, so that a gateway that (re)connects learns every peer's bids
/// at once; the runtime clears it (an empty set) when the gateway stops. JSON:
/// `{"gw":"hall","bids":[{"dev":"AA:BB:CC:DD:EE:FF","s":-61.5}]}`, devices in address order.
public struct OwnershipBids: Hashable, Sendable, Codable {
    public var gateway: GatewayID
    public var bids: [DeviceID: OwnershipBid]

    public init(gateway: GatewayID, bids: [DeviceID: OwnershipBid]) {
        self.gateway = gateway
        self.bids = bids
    }

    private enum CodingKeys: String, CodingKey { case gateway = "gw", bids }

    /// A dictionary keyed by `DeviceID` would encode as a flat array of alternating keys and
    /// values; a list of small objects reads better and sorts stably.
    private struct Entry: Codable {
        var dev: DeviceID
        var s: Double
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        gateway = try values.decode(GatewayID.self, forKey: .gateway)
        var bids: [DeviceID: OwnershipBid] = [:]
        for entry in try values.decode([Entry].self, forKey: .bids) { bids[entry.dev] = OwnershipBid(score: entry.s) }
        self.bids = bids
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(gateway, forKey: .gateway)
        let entries = bids.sorted { $0.key < $1.key }.map { Entry(dev: $0.key, s: $0.value.score) }
        try values.encode(entries, forKey: .bids)
    }
}

/// A gateway's liveness message: `alive == true` is its heartbeat (every `renewal`, never
/// retained, so that a dead gateway's last heartbeat is not replayed to a gateway that connects
/// later), `alive == false` its MQTT Last Will, which the broker publishes when the gateway's
/// connection ends without a goodbye. JSON: `{"gw":"hall","alive":true}`.
public struct GatewayLiveness: Hashable, Sendable, Codable {
    public var gateway: GatewayID
    public var alive: Bool

    public init(gateway: GatewayID, alive: Bool) {
        self.gateway = gateway
        self.alive = alive
    }

    private enum CodingKeys: String, CodingKey { case gateway = "gw", alive }
}
