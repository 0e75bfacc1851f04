/// Which subscriptions took a signal in `offerToClaims`, and whether anyone still needs it
/// decoded.
struct SignalClaims {
    /// The first subscription that claimed the signal: nearly always the only one, so the
    /// common case allocates nothing.
    private var first: UInt64?
    private var others: [UInt64] = []
    /// Set when a subscription matched the signal and did not claim it, or the connection itself
    /// needs it decoded.
    var wantedDecoded = false

    /// True when the signal was claimed and nothing else wants it: it is not decoded at all.
    var takeWholeSignal: Bool { first != nil && !wantedDecoded }

    mutating func add(_ id: UInt64) {
        if first == nil { first = id } else { others.append(id) }
    }

    func contains(_ id: UInt64) -> Bool {
        first == id || (!others.isEmpty && others.contains(id))
    }
}

extension DBusConnection {
    /// Offers a signal, before it is decoded, to every matching subscription that has a claim
    /// (see `subscribe(matching:claim:onSignals:onEnd:)`). Runs from `handleIncoming`, on the
    /// connection's thread; the reader the claims get is valid only until this returns (the
    /// message is released after it has been handled).
    func offerToClaims(_ message: OpaquePointer, sender: UnsafePointer<CChar>?) -> SignalClaims {
        var claims = SignalClaims()
        let reader = DBusMessageReader(raw: message, sender: sender)
        // Name tracking (`deliverSignal`) reads the bus's NameOwnerChanged decoded.
        if reader.hasSender(Self.busName), reader.hasMember("NameOwnerChanged", of: Self.busName) {
            claims.wantedDecoded = true
            return claims
        }
        for route in currentSignalRoutes() {
            guard route.rule.matches(reader, expectedSender: route.expectedSender) else { continue }
            guard let claim = route.claim else {
                claims.wantedDecoded = true
                continue
            }
            // Signals matched earlier go first, so the claim sees the state they leave behind
            // and its subscription sees everything in arrival order.
            flushSignals()
            if claim(reader) {
                claims.add(route.id)
                claimedSignals += 1
            } else {
                claims.wantedDecoded = true
            }
        }
        return claims
    }

    /// The subscriptions as `offerToClaims` reads them, rebuilt after a subscription or a
    /// tracked owner changed (both rare) rather than looked up per signal.
    private func currentSignalRoutes() -> [SignalRoute] {
        if let signalRoutes { return signalRoutes }
        let routes = subscriptions.sorted { $0.key < $1.key }.map { id, subscription in
            let owner = subscription.rule.sender.flatMap { trackedNames[$0]?.owner }
            return SignalRoute(
                id: id, rule: subscription.rule, expectedSender: subscription.rule.expectedSender(senderOwner: owner),
                claim: subscription.claim)
        }
        signalRoutes = routes
        return routes
    }

    static let busName = "org.freedesktop.DBus"
}

/// One subscription as `offerToClaims` reads it, with the sender it currently expects.
final class SignalRoute {
    let id: UInt64
    let rule: MatchRule
    let expectedSender: String?
    let claim: DBusSignalClaim?

    init(id: UInt64, rule: MatchRule, expectedSender: String?, claim: DBusSignalClaim?) {
        self.id = id
        self.rule = rule
        self.expectedSender = expectedSender
        self.claim = claim
    }
}
