import FleetCore
import Foundation

/// A discrete-event world of gateways that share devices through a simulated MQTT broker, each
/// gateway run by a real `OwnershipMachine`, on one simulated clock and one seeded random source.
///
/// The broker: a publication reaches the broker after an uplink delay and each subscriber after
/// a downlink delay, each drawn in `[0, maxDelay / 2]`, so messages are reordered per publisher
/// and across publishers. Claims are retained per device and bids per gateway (last write at the
/// broker wins) and replayed to a gateway that connects. Heartbeats may be lost per subscriber
/// (never more than `maxConsecutiveHeartbeatLosses` in a row); nothing else is lost while a
/// gateway stays connected. A gateway that dies or is cut off gets its Will published after
/// `willDelay`; a restarted broker drops every connection and everything in flight, optionally
/// its retained store, and sends no Wills.
///
/// The radio: each gateway hears each device at a fixed RSSI plus Gaussian noise, every
/// `hearingPeriod`. A device accepts one link in the whole world: an attempt (`connectTime`)
/// while another gateway holds it is refused (`linkChanged(false)`, retried after 1 s). A dead
/// gateway's links drop after `supervisionTimeout`.
struct OwnershipWorld {
    struct Parameters: CustomStringConvertible {
        var gateways = 3
        var devices = 6
        var configuration = OwnershipConfiguration()
        var maxDelay: Duration = .milliseconds(400)
        var heartbeatLoss = 0.0
        var maxConsecutiveHeartbeatLosses = 1
        /// Standard deviation of one RSSI reading, dB.
        var rssiNoise = 2.0
        var hearingPeriod: Duration = .seconds(1)
        var connectTime: ClosedRange<Int64> = 300...1_200  // ms
        var disconnectTime: ClosedRange<Int64> = 50...300  // ms
        var willDelay: ClosedRange<Int64> = 2_000...10_000  // ms
        var supervisionTimeout: Duration = .milliseconds(500)
        var slotsPerGateway = 8
        var seed: UInt64 = 0

        var description: String {
            "\(gateways) gateways, \(devices) devices, delay ≤ \(maxDelay), heartbeat loss \(heartbeatLoss), "
                + "noise \(rssiNoise) dB, seed \(seed)"
        }
    }

    enum Message: Hashable {
        case claim(OwnerClaim)
        case bids(Int, [DeviceID: OwnershipBid])
        case heartbeat(Int)
        case offline(Int)

        var kind: Kind {
            switch self {
            case .claim: .claim
            case .bids: .bids
            case .heartbeat: .heartbeat
            case .offline: .offline
            }
        }

        enum Kind: Hashable, CaseIterable { case claim, bids, heartbeat, offline }
    }

    /// Something the test script does to the world.
    enum Fault: Hashable {
        /// SIGKILL: the machine is gone, its links drop, its Will follows.
        case kill(Int)
        /// A fresh machine starts and connects.
        case restart(Int)
        /// The gateway loses the broker (everything it sends or would receive is lost) but
        /// keeps its radio and links.
        case partition(Int)
        case heal(Int)
        case brokerDown(losingRetained: Bool)
        /// The broker is back; each gateway reconnects within `reconnectSkew`.
        case brokerUp(reconnectSkew: Duration)
        /// The device moves: gateway `gateway` now hears it at `rssi` (below −100 dBm: not at all,
        /// and a link there drops).
        case setRSSI(device: Int, gateway: Int, rssi: Double)
    }

    private enum Event {
        case atBroker(from: Int, connection: Int, Message)
        case deliver(to: Int, connection: Int, Message)
        case will(gateway: Int, brokerGeneration: Int)
        case tick(gateway: Int, generation: Int)
        case connect(gateway: Int, incarnation: Int)
        case hearing
        case attemptEnds(gateway: Int, incarnation: Int, device: Int)
        case retry(gateway: Int, incarnation: Int, device: Int)
        case disconnectEnds(gateway: Int, device: Int)
        case linkDropped(gateway: Int, device: Int)
        case fault(Fault)
    }

    struct Gateway {
        let id: GatewayID
        var machine: OwnershipMachine?
        var incarnation = 0
        var connection: Int?
        var partitioned = false
        var wants: Set<Int> = []
        var attempting: Set<Int> = []
        var heard: Set<Int> = []
        var tickGeneration = 0
        var recentFailures: [Int: Int] = [:]

        var isAlive: Bool { machine != nil }
    }

    /// What the world counted.
    struct Counters {
        /// A gateway asked for a device's link while another gateway wanted it or held it: two
        /// links at once if the device accepted two.
        var overlaps: [(at: MonotonicInstant, device: Int, gateways: (Int, Int))] = []
        /// Attempts the device refused because another gateway held its link.
        var refusedAttempts = 0
        /// Per device: links made by a gateway other than the one that linked it last.
        var linkMoves: [Int]
        /// Messages published, by kind (what reached the broker's front door).
        var published: [Message.Kind: Int] = [:]
        /// From a gateway's death to each of its devices' next link elsewhere.
        var handoffTimes: [Duration] = []
        var events = 0
        var exceededEventBudget = false
    }

    let parameters: Parameters
    let deviceIDs: [DeviceID]
    private(set) var now = MonotonicInstant.zero
    private(set) var gateways: [Gateway]
    /// rssi[gateway][device]: the mean reading; below −100 dBm the gateway does not hear it.
    private(set) var rssi: [[Double]]
    /// Which gateway holds each device's link, physically.
    private(set) var holder: [Int?]
    private var lastHolder: [Int?]
    private(set) var counters: Counters
    private(set) var brokerUp = true
    private var brokerGeneration = 0
    private(set) var retainedClaims: [DeviceID: OwnerClaim] = [:]
    private var retainedBids: [Int: [DeviceID: OwnershipBid]] = [:]
    private var consecutiveLosses: [Int: Int] = [:]
    private var nextConnection = 0
    private var awaitingHandoff: [Int: MonotonicInstant] = [:]
    private var random: SeededRandom
    private var queue = EventQueue<Event>()

    /// Gateways start at t = 0 and connect within the first second; `rssi` gives each gateway's
    /// mean reading of each device.
    init(_ parameters: Parameters, rssi: [[Double]]) {
        self.parameters = parameters
        self.rssi = rssi
        deviceIDs = (0..<parameters.devices).map { PoolFixture.device($0 + 1) }
        gateways = (0..<parameters.gateways).map { index in
            let id = GatewayID("gw\(index)")
            return Gateway(id: id, machine: OwnershipMachine(gateway: id, configuration: parameters.configuration))
        }
        holder = Array(repeating: nil, count: parameters.devices)
        lastHolder = holder
        counters = Counters(linkMoves: Array(repeating: 0, count: parameters.devices))
        random = SeededRandom(seed: parameters.seed)
        for index in gateways.indices {
            push(.connect(gateway: index, incarnation: 0), after: .milliseconds(Int64(random.unit() * 1_000)))
        }
        push(.hearing, after: .zero)
    }

    /// A world where each device sits somewhere among the gateways: each gateway hears each
    /// device at a mean drawn in −95…−45 dBm.
    static func random(_ parameters: Parameters) -> OwnershipWorld {
        var draw = SeededRandom(seed: parameters.seed ^ 0x0A11_CE55)
        let rssi = (0..<parameters.gateways).map { _ in
            (0..<parameters.devices).map { _ in -95 + 50 * draw.unit() }
        }
        return OwnershipWorld(parameters, rssi: rssi)
    }

    mutating func schedule(_ fault: Fault, atSeconds seconds: Double) {
        queue.push(.fault(fault), at: MonotonicInstant(nanoseconds: Int64(seconds * 1e9)))
    }

    mutating func run(untilSeconds seconds: Double) {
        let end = MonotonicInstant(nanoseconds: Int64(seconds * 1e9))
        while !counters.exceededEventBudget, let (at, event) = queue.popIfDue(by: end) {
            now = at
            handle(event)
            counters.events += 1
            // A message storm (gateways answering each other faster than time passes) would
            // otherwise hang the test instead of failing it.
            counters.exceededEventBudget = counters.events > 3_000_000
        }
        now = end
    }

    /// Runs on, in half-second steps for at most `seconds`, until every live gateway agrees and
    /// every heard device is served: a check made at an arbitrary instant may fall inside a
    /// handoff (from the release to the successor's link: settle, a round trip and a connection,
    /// about 3 s) or while a claim is in flight.
    mutating func runUntilQuiet(forAtMostSeconds seconds: Double = 5) {
        let end = Double(now.nanoseconds) / 1e9 + seconds
        while !(disagreements().isEmpty && unservedDevices().isEmpty), Double(now.nanoseconds) / 1e9 < end {
            run(untilSeconds: Double(now.nanoseconds) / 1e9 + 0.5)
        }
    }

    // MARK: - Observations

    func isConnected(_ gateway: Int) -> Bool { gateways[gateway].connection != nil }

    func hears(_ gateway: Int, _ device: Int) -> Bool { rssi[gateway][device] >= -100 }

    /// Per device, the greatest claims of the live, connected gateways, when they differ.
    func disagreements() -> [Int: [OwnerClaim?]] {
        var result: [Int: [OwnerClaim?]] = [:]
        for device in deviceIDs.indices {
            let claims = gateways.filter { $0.isAlive && $0.connection != nil }.map { $0.machine?.greatestClaim(for: deviceIDs[device]) }
            if Set(claims).count > 1 { result[device] = claims }
        }
        return result
    }

    /// The owner every live gateway agrees on (nil when they do not agree, or nobody owns it).
    func agreedOwner(of device: Int) -> Int? {
        guard disagreements()[device] == nil,
              let claim = gateways.first(where: { $0.isAlive && $0.connection != nil })?.machine?.greatestClaim(for: deviceIDs[device]),
              let owner = claim.gateway
        else { return nil }
        return gateways.firstIndex { $0.id == owner }
    }

    /// Devices that some live, connected gateway hears but that have no live owner holding
    /// their link.
    func unservedDevices() -> [Int] {
        deviceIDs.indices.filter { device in
            let heard = gateways.indices.contains { gateways[$0].isAlive && isConnected($0) && hears($0, device) }
            guard heard else { return false }
            guard let owner = agreedOwner(of: device), gateways[owner].isAlive else { return true }
            return holder[device] != owner
        }
    }

    // MARK: - Events

    private mutating func handle(_ event: Event) {
        switch event {
        case .atBroker(let from, let connection, let message):
            guard brokerUp, gateways[from].connection == connection else { return }
            switch message {
            case .claim(let claim): retainedClaims[claim.device] = claim
            case .bids(let gateway, let bids): retainedBids[gateway] = bids
            case .heartbeat, .offline: break
            }
            fanOut(message, from: from)
        case .deliver(let to, let connection, let message):
            guard gateways[to].connection == connection else { return }
            apply(input(for: message), to: to)
        case .will(let gateway, let generation):
            guard brokerUp, generation == brokerGeneration else { return }
            fanOut(.offline(gateway), from: nil)
        case .tick(let gateway, let generation):
            guard generation == gateways[gateway].tickGeneration else { return }
            apply(.tick, to: gateway)
        case .connect(let gateway, let incarnation):
            connect(gateway, incarnation: incarnation)
        case .hearing:
            hearingRound()
            push(.hearing, after: parameters.hearingPeriod)
        case .attemptEnds(let gateway, let incarnation, let device):
            attemptEnds(gateway, incarnation: incarnation, device: device)
        case .retry(let gateway, let incarnation, let device):
            guard gateways[gateway].incarnation == incarnation else { return }
            startAttemptIfWanted(gateway, device: device)
        case .disconnectEnds(let gateway, let device):
            guard holder[device] == gateway else { return }
            holder[device] = nil
            apply(.linkChanged(deviceIDs[device], linked: false), to: gateway)
            startAttemptIfWanted(gateway, device: device)
        case .linkDropped(let gateway, let device):
            if holder[device] == gateway { holder[device] = nil }
        case .fault(let fault):
            inject(fault)
        }
    }

    private mutating func inject(_ fault: Fault) {
        switch fault {
        case .kill(let gateway):
            guard gateways[gateway].isAlive else { return }
            dropConnection(gateway, sendingWill: true, tellingMachine: false)
            gateways[gateway].machine = nil
            gateways[gateway].incarnation += 1
            gateways[gateway].wants = []
            gateways[gateway].attempting = []
            gateways[gateway].heard = []
            gateways[gateway].tickGeneration += 1
            for device in holder.indices where holder[device] == gateway {
                awaitingHandoff[device] = now
                push(.linkDropped(gateway: gateway, device: device), after: parameters.supervisionTimeout)
            }
        case .restart(let gateway):
            guard !gateways[gateway].isAlive else { return }
            gateways[gateway].machine = OwnershipMachine(gateway: gateways[gateway].id, configuration: parameters.configuration)
            gateways[gateway].recentFailures = [:]
            push(.connect(gateway: gateway, incarnation: gateways[gateway].incarnation), after: .seconds(1))
        case .partition(let gateway):
            gateways[gateway].partitioned = true
            dropConnection(gateway, sendingWill: true, tellingMachine: true)
        case .heal(let gateway):
            gateways[gateway].partitioned = false
            push(.connect(gateway: gateway, incarnation: gateways[gateway].incarnation), after: .milliseconds(500))
        case .brokerDown(let losingRetained):
            brokerUp = false
            brokerGeneration += 1
            if losingRetained {
                retainedClaims = [:]
                retainedBids = [:]
            }
            for gateway in gateways.indices { dropConnection(gateway, sendingWill: false, tellingMachine: true) }
        case .brokerUp(let skew):
            brokerUp = true
            for gateway in gateways.indices {
                let delay = Int64(Double(skew.nanosecondsClamped) * random.unit())
                push(.connect(gateway: gateway, incarnation: gateways[gateway].incarnation), after: .nanoseconds(delay))
            }
        case .setRSSI(let device, let gateway, let value):
            rssi[gateway][device] = value
            // Out of range, the link drops.
            if !hears(gateway, device), holder[device] == gateway {
                holder[device] = nil
                apply(.linkChanged(deviceIDs[device], linked: false), to: gateway)
            }
        }
    }

    private mutating func dropConnection(_ gateway: Int, sendingWill: Bool, tellingMachine: Bool) {
        guard gateways[gateway].connection != nil else { return }
        gateways[gateway].connection = nil
        if sendingWill, brokerUp {
            let delay = Int64.random(in: parameters.willDelay, using: &random)
            push(.will(gateway: gateway, brokerGeneration: brokerGeneration), after: .milliseconds(delay))
        }
        if tellingMachine { apply(.brokerLost, to: gateway) }
    }

    private mutating func connect(_ gateway: Int, incarnation: Int) {
        guard brokerUp, gateways[gateway].isAlive, gateways[gateway].incarnation == incarnation,
              !gateways[gateway].partitioned, gateways[gateway].connection == nil
        else { return }
        nextConnection += 1
        let connection = nextConnection
        gateways[gateway].connection = connection
        apply(.brokerConnected, to: gateway)
        // Retained messages follow the subscription, in no particular order.
        for device in deviceIDs { if let claim = retainedClaims[device] { deliver(.claim(claim), to: gateway) } }
        for (peer, bids) in retainedBids.sorted(by: { $0.key < $1.key }) { deliver(.bids(peer, bids), to: gateway) }
    }

    private mutating func fanOut(_ message: Message, from publisher: Int?) {
        for subscriber in gateways.indices where gateways[subscriber].connection != nil {
            if case .heartbeat = message, let publisher, parameters.heartbeatLoss > 0 {
                let pair = publisher * 64 + subscriber
                let losses = consecutiveLosses[pair, default: 0]
                if random.unit() < parameters.heartbeatLoss, losses < parameters.maxConsecutiveHeartbeatLosses {
                    consecutiveLosses[pair, default: 0] += 1
                    continue
                }
                consecutiveLosses[pair] = 0
            }
            deliver(message, to: subscriber)
        }
    }

    private mutating func deliver(_ message: Message, to subscriber: Int) {
        guard let connection = gateways[subscriber].connection else { return }
        push(.deliver(to: subscriber, connection: connection, message), after: halfDelay())
    }

    private mutating func halfDelay() -> Duration {
        .nanoseconds(Int64(Double(parameters.maxDelay.nanosecondsClamped / 2) * random.unit()))
    }

    private func input(for message: Message) -> OwnershipInput {
        switch message {
        case .claim(let claim): .claimReceived(claim)
        case .bids(let gateway, let bids): .bidsReceived(gateways[gateway].id, bids)
        case .heartbeat(let gateway): .heartbeat(gateways[gateway].id)
        case .offline(let gateway): .gatewayOffline(gateways[gateway].id)
        }
    }

    // MARK: - The radio

    private mutating func hearingRound() {
        for gateway in gateways.indices where gateways[gateway].isAlive {
            let held = holder.filter { $0 == gateway }.count
            for device in deviceIDs.indices {
                guard hears(gateway, device) else {
                    if gateways[gateway].heard.remove(device) != nil { apply(.notHeard(deviceIDs[device]), to: gateway) }
                    continue
                }
                gateways[gateway].heard.insert(device)
                let reading = rssi[gateway][device] + parameters.rssiNoise * gaussian()
                let free = parameters.slotsPerGateway - held + (holder[device] == gateway ? 1 : 0)
                let inputs = OwnershipBidInputs(
                    rssi: Int(reading.rounded()), freeSlots: max(free, 0),
                    recentFailures: gateways[gateway].recentFailures[device, default: 0])
                apply(.heard(deviceIDs[device], inputs), to: gateway)
            }
        }
    }

    private mutating func gaussian() -> Double {
        // Box–Muller; 1 − unit() is in (0, 1], so the logarithm is finite.
        let u = 1 - random.unit()
        let v = random.unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    private mutating func startAttemptIfWanted(_ gateway: Int, device: Int) {
        guard gateways[gateway].isAlive, gateways[gateway].wants.contains(device), holder[device] != gateway,
              !gateways[gateway].attempting.contains(device), hears(gateway, device)
        else { return }
        gateways[gateway].attempting.insert(device)
        let duration = Int64.random(in: parameters.connectTime, using: &random)
        push(.attemptEnds(gateway: gateway, incarnation: gateways[gateway].incarnation, device: device), after: .milliseconds(duration))
    }

    private mutating func attemptEnds(_ gateway: Int, incarnation: Int, device: Int) {
        guard gateways[gateway].incarnation == incarnation else { return }
        gateways[gateway].attempting.remove(device)
        guard gateways[gateway].wants.contains(device), holder[device] != gateway else { return }
        if holder[device] == nil, hears(gateway, device) {
            holder[device] = gateway
            if let last = lastHolder[device], last != gateway { counters.linkMoves[device] += 1 }
            lastHolder[device] = gateway
            if let since = awaitingHandoff.removeValue(forKey: device) { counters.handoffTimes.append(now.duration(since: since)) }
            apply(.linkChanged(deviceIDs[device], linked: true), to: gateway)
        } else {
            if holder[device] != nil { counters.refusedAttempts += 1 }
            apply(.linkChanged(deviceIDs[device], linked: false), to: gateway)
            push(.retry(gateway: gateway, incarnation: incarnation, device: device), after: .seconds(1))
        }
    }

    // MARK: - Carrying out actions

    private mutating func apply(_ input: OwnershipInput, to gateway: Int) {
        // In place: a copy of the machine would copy its dictionaries on every input.
        let actions = gateways[gateway].machine?.handle(input, now: now) ?? []
        for action in actions { perform(action, for: gateway) }
    }

    private mutating func perform(_ action: OwnershipAction, for gateway: Int) {
        switch action {
        case .publishClaim(let claim): publish(.claim(claim), from: gateway)
        case .publishBids(let bids): publish(.bids(gateway, bids), from: gateway)
        case .publishHeartbeat: publish(.heartbeat(gateway), from: gateway)
        case .acquire(let id):
            guard let device = deviceIDs.firstIndex(of: id) else { return }
            for other in gateways.indices where other != gateway {
                if gateways[other].wants.contains(device) || holder[device] == other {
                    counters.overlaps.append((now, device, (gateway, other)))
                }
            }
            gateways[gateway].wants.insert(device)
            startAttemptIfWanted(gateway, device: device)
        case .release(let id):
            guard let device = deviceIDs.firstIndex(of: id) else { return }
            gateways[gateway].wants.remove(device)
            if holder[device] == gateway {
                let duration = Int64.random(in: parameters.disconnectTime, using: &random)
                push(.disconnectEnds(gateway: gateway, device: device), after: .milliseconds(duration))
            }
        case .scheduleTick(let at):
            gateways[gateway].tickGeneration += 1
            queue.push(.tick(gateway: gateway, generation: gateways[gateway].tickGeneration), at: max(at, now))
        }
    }

    private mutating func publish(_ message: Message, from gateway: Int) {
        guard let connection = gateways[gateway].connection, brokerUp else { return }
        counters.published[message.kind, default: 0] += 1
        push(.atBroker(from: gateway, connection: connection, message), after: halfDelay())
    }

    private mutating func push(_ event: Event, after delay: Duration) {
        queue.push(event, at: now + delay)
    }
}

/// Events by instant; events at one instant come out in the order they were pushed.
struct EventQueue<Event> {
    private var heap: [(at: MonotonicInstant, sequence: Int, event: Event)] = []
    private var sequence = 0

    mutating func push(_ event: Event, at instant: MonotonicInstant) {
        sequence += 1
        heap.append((instant, sequence, event))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popIfDue(by end: MonotonicInstant) -> (MonotonicInstant, Event)? {
        guard let first = heap.first, first.at <= end else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, Self.precedes(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, Self.precedes(heap[right], heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.at, first.event)
    }

    private static func precedes(
        _ lhs: (at: MonotonicInstant, sequence: Int, event: Event), _ rhs: (at: MonotonicInstant, sequence: Int, event: Event)
    ) -> Bool {
        lhs.at != rhs.at ? lhs.at < rhs.at : lhs.sequence < rhs.sequence
    }
}
