import FleetCore
import FoundationEssentials

/// Turns the broker's ownership messages into `OwnershipMachine` inputs, and the machine's
/// messages into payloads. Pure: the coordinator counts and logs what it cannot read.
///
/// Every payload comes from some client of a shared broker, so nothing in one is trusted beyond
/// what is checked here: a message whose `gw` is not its topic's gateway, or whose claim's `dev`
/// is not its topic's address, is malformed, and so is a claim whose epoch or revision is so
/// large that the machine's `+ 1` would overflow.
public struct OwnershipMessageDecoder: Sendable {
    public let topics: OwnershipTopics

    public init(topics: OwnershipTopics) { self.topics = topics }

    /// Epochs and revisions above this are refused: the machine claims with `epoch + 1` and
    /// updates with `revision + 1`, which must never trap. 2^53 is also the largest integer every
    /// JSON reader (JavaScript's included) keeps exact, and at one claim a second it lasts for
    /// ages.
    public static let largestCounter: UInt64 = 1 << 53

    public enum Outcome: Sendable, Equatable {
        case input(OwnershipInput)
        /// Well formed, and nothing for the machine (a deleted retained claim, a peer's `online`).
        case ignored(String)
        case malformed(String)
    }

    /// What the message on `topic` means; nil when the topic is not an ownership topic.
    public func decode(topic: String, payload: [UInt8]) -> Outcome? {
        guard let kind = topics.kind(of: topic) else { return nil }
        switch kind {
        case .owner(let segment): return claim(payload, segment: segment)
        case .alive(let gateway): return liveness(payload, gateway: gateway)
        case .bids(let gateway): return bids(payload, gateway: gateway)
        case .status(let gateway): return status(payload, gateway: gateway)
        }
    }

    private func claim(_ payload: [UInt8], segment: String) -> Outcome {
        // An empty retained message deletes the record on the broker: no claim in it, and the
        // machine keeps the greatest claim it has seen anyway.
        guard !payload.isEmpty else { return .ignored("claim deleted") }
        let claim: OwnerClaim
        do {
            claim = try JSONDecoder().decode(OwnerClaim.self, from: Data(payload))
        } catch {
            return .malformed("not an owner claim: \(Self.reason(error))")
        }
        guard MQTTTopics.segment(claim.device) == segment.uppercased() else {
            return .malformed("the claim's device \(claim.device) is not the topic's \(segment)")
        }
        guard claim.epoch < Self.largestCounter, claim.revision < Self.largestCounter else {
            return .malformed("epoch or revision out of range")
        }
        return .input(.claimReceived(claim))
    }

    private func liveness(_ payload: [UInt8], gateway: GatewayID) -> Outcome {
        let liveness: GatewayLiveness
        do {
            liveness = try JSONDecoder().decode(GatewayLiveness.self, from: Data(payload))
        } catch {
            return .malformed("not a liveness message: \(Self.reason(error))")
        }
        guard liveness.gateway == gateway else { return .malformed("liveness of \(liveness.gateway) on \(gateway)'s topic") }
        return .input(liveness.alive ? .heartbeat(gateway) : .gatewayOffline(gateway))
    }

    private func bids(_ payload: [UInt8], gateway: GatewayID) -> Outcome {
        // Deleted (a gateway that stopped cleanly clears its bids): it hears nothing.
        guard !payload.isEmpty else { return .input(.bidsReceived(gateway, [:])) }
        let bids: OwnershipBids
        do {
            bids = try JSONDecoder().decode(OwnershipBids.self, from: Data(payload))
        } catch {
            return .malformed("not a bids message: \(Self.reason(error))")
        }
        guard bids.gateway == gateway else { return .malformed("bids of \(bids.gateway) on \(gateway)'s topic") }
        guard bids.bids.values.allSatisfy(\.score.isFinite) else { return .malformed("a bid is not a finite number") }
        return .input(.bidsReceived(gateway, bids.bids))
    }

    /// `offline` — a clean stop's or the Last Will — means the gateway is gone now. `online` is
    /// not a sign of life: it is retained, so a gateway that died while the broker was away (no
    /// Will) would look alive to everyone who subscribes later. Heartbeats alone revive a peer,
    /// and a gateway sends one at once on every connection.
    private func status(_ payload: [UInt8], gateway: GatewayID) -> Outcome {
        switch payload {
        case Array("offline".utf8): .input(.gatewayOffline(gateway))
        case Array("online".utf8): .ignored("online")
        // Deleted: the gateway's retained status went with it (nothing said about liveness).
        case []: .ignored("status deleted")
        default: .malformed("a status is online or offline")
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        case DecodingError.keyNotFound(let key, _): "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }

    // MARK: - Payloads

    /// The JSON of a message of this gateway's; nil only for a bid that is not a finite number,
    /// which the machine never makes (its scores are rounded readings).
    public static func payload(_ message: some Encodable) -> [UInt8]? {
        try? Array(JSONEncoder().encode(message))
    }
}
