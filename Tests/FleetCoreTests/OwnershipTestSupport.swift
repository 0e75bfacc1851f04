import FleetCore

/// One `OwnershipMachine` on a hand-driven clock, for the rule-by-rule tests. It plays the
/// runtime's timer: moving the clock delivers every tick the machine asked for on the way.
struct OwnershipHarness {
    var machine: OwnershipMachine
    private(set) var now: MonotonicInstant = .zero
    /// The tick the machine last asked for and has not had yet.
    private(set) var scheduledTick: MonotonicInstant?
    private var lastTick: MonotonicInstant?

    init(_ name: String, configuration: OwnershipConfiguration = OwnershipConfiguration()) {
        machine = OwnershipMachine(gateway: GatewayID(name), configuration: configuration)
    }

    var gateway: GatewayID { machine.gateway }

    /// Moves the clock to `seconds` (or leaves it), then feeds the input. Returns the input's
    /// actions without tick requests; what the ticks on the way did is dropped (use `tick(at:)`
    /// to see it).
    @discardableResult
    mutating func send(_ input: OwnershipInput, at seconds: Double? = nil) -> [OwnershipAction] {
        if let seconds { _ = advance(to: OwnershipHarness.instant(seconds)) }
        return apply(input)
    }

    /// Moves the clock to `seconds` and ticks there: every action on the way, without tick
    /// requests.
    @discardableResult
    mutating func tick(at seconds: Double) -> [OwnershipAction] {
        let target = OwnershipHarness.instant(seconds)
        var actions = advance(to: target)
        if lastTick != target {
            lastTick = target
            actions += apply(.tick)
        }
        return actions
    }

    private mutating func advance(to target: MonotonicInstant) -> [OwnershipAction] {
        precondition(target >= now, "the clock only moves forward")
        var actions: [OwnershipAction] = []
        while let due = scheduledTick, due <= target {
            now = due
            scheduledTick = nil
            lastTick = due
            actions += apply(.tick)
        }
        now = target
        return actions
    }

    private mutating func apply(_ input: OwnershipInput) -> [OwnershipAction] {
        machine.handle(input, now: now).filter {
            guard case .scheduleTick(let at) = $0 else { return true }
            scheduledTick = at
            return false
        }
    }

    /// Heartbeats of `peer` at every multiple of 5 s after now, up to `seconds`: every action on
    /// the way, without tick requests.
    @discardableResult
    mutating func keepAlive(_ peer: GatewayID, through seconds: Double) -> [OwnershipAction] {
        var actions: [OwnershipAction] = []
        var beat = (Double(now.nanoseconds) / 5e9).rounded(.down) * 5 + 5
        while beat <= seconds {
            actions += tick(at: beat)
            actions += apply(.heartbeat(peer))
            beat += 5
        }
        return actions + tick(at: seconds)
    }

    /// Connected, then one device heard: the usual start of a story.
    mutating func connectAndHear(_ device: DeviceID, rssi: Int = -60, at seconds: Double = 0) {
        send(.brokerConnected, at: seconds)
        send(.heard(device, OwnershipBidInputs(rssi: rssi, freeSlots: 3)))
    }

    static func instant(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Int64((seconds * 1e9).rounded()))
    }
}

enum OwnershipFixture {
    static let a = GatewayID("a")
    static let b = GatewayID("b")
    static let c = GatewayID("c")
    static let device = PoolFixture.device(1)
    static let other = PoolFixture.device(2)

    static func claim(_ gateway: GatewayID?, epoch: UInt64, revision: UInt64 = 0, linked: Bool = false, device: DeviceID = device)
        -> OwnerClaim
    {
        OwnerClaim(device: device, gateway: gateway, epoch: epoch, revision: revision, linked: linked)
    }

    static func bids(_ score: Double, device: DeviceID = device) -> [DeviceID: OwnershipBid] {
        [device: OwnershipBid(score: score)]
    }
}

extension [OwnershipAction] {
    var claims: [OwnerClaim] {
        compactMap {
            if case .publishClaim(let claim) = $0 { return claim }
            return nil
        }
    }

    var publishedBids: [[DeviceID: OwnershipBid]] {
        compactMap {
            if case .publishBids(let bids) = $0 { return bids }
            return nil
        }
    }

    func acquires(_ device: DeviceID) -> Bool { contains(.acquire(device)) }
    func releases(_ device: DeviceID) -> Bool { contains(.release(device)) }
}
