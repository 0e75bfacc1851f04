import Fleet
import FleetCore
import Logging

/// What the fleet must do with one device's link, as this gateway's share of the agreement
/// between gateways decides it.
public enum OwnershipDecision: Sendable, Hashable {
    /// Connect the device and keep it connected (retrying on its own) until `release`; report
    /// the link with `OwnershipCoordinator.linkChanged`.
    case acquire(DeviceID)
    /// Disconnect the device and stop trying; report the link's end with `linkChanged(…, linked: false)`.
    case release(DeviceID)
}

/// Where the coordinator's messages go: the daemon's `MQTTClient` (whose `publish` never waits).
public protocol OwnershipPublisher: Sendable {
    func publish(_ message: MQTTMessage)
}

extension MQTTClient: OwnershipPublisher {}

/// The ownership machine on a real broker: one gateway's side of the agreement on which gateway
/// connects each device (ARCHITECTURE.md, "Several gateways: ownership through the broker").
///
/// It owns an `OwnershipMachine` and carries out its actions: claims (retained, QoS 1), bids
/// (retained, QoS 1) and heartbeats (QoS 1, not retained) go to the publisher; `acquire` and
/// `release` come out of `decisions`; the machine's one timer is a task of its own, replaced at
/// each `scheduleTick`. Inputs come from the broker — routed by whoever reads the client's
/// events (`MQTTBridge` in the daemon, `follow` for a client of its own) through
/// `handle(_:)`/`handle(topic:payload:)` — and from the fleet (`heard`, `notHeard`,
/// `linkChanged`).
///
/// An actor: every input is one synchronous step — the machine decides, the actions are carried
/// out (publishing only queues on the client) — so no input ever sees another half applied, and
/// nothing waits on the network. Malformed messages are counted (`status().counters`) and
/// logged, never fed to the machine.
public actor OwnershipCoordinator {
    public nonisolated let topics: OwnershipTopics
    /// `acquire`/`release`, in the order decided; one consumer (the fleet). Unbounded: there is
    /// at most one decision per device per input, and losing one would leave the fleet holding a
    /// link the machine released or never connecting one it acquired.
    public nonisolated let decisions: AsyncStream<OwnershipDecision>
    private let decisionSink: AsyncStream<OwnershipDecision>.Continuation
    private let decoder: OwnershipMessageDecoder
    private var machine: OwnershipMachine
    private let publisher: any OwnershipPublisher
    private let clock: any MonotonicClock
    private let logger: Logger
    private var counters = OwnershipCounters()
    private var timer: Task<Void, Never>?
    /// Stamps each timer so that one replaced after it had fired, but before it ran here, does nothing.
    private var timerGeneration: UInt64 = 0
    private var stopped = false

    public init(
        topics: OwnershipTopics, configuration: OwnershipConfiguration = OwnershipConfiguration(), publisher: any OwnershipPublisher,
        clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger
    ) {
        self.topics = topics
        decoder = OwnershipMessageDecoder(topics: topics)
        machine = OwnershipMachine(gateway: topics.gateway, configuration: configuration)
        self.publisher = publisher
        self.clock = clock
        var logger = logger
        logger[metadataKey: "gateway"] = "\(topics.gatewayID)"
        self.logger = logger
        (decisions, decisionSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: - The broker

    /// Reads a client's events until they end: for a client that serves ownership alone. On the
    /// daemon's shared client the bridge reads the events and routes them here instead.
    public func follow(_ events: AsyncStream<MQTTClient.Event>) async {
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next(isolation: self) { handle(event) }
    }

    /// One event of the client: its connection's start and end, and messages (those on other
    /// topics than ownership's are ignored).
    public func handle(_ event: MQTTClient.Event) {
        switch event {
        case .connected: brokerConnected()
        case .disconnected: brokerLost()
        case .message(let topic, let payload): handle(topic: topic, payload: payload)
        }
    }

    /// The client's connection was accepted and its subscriptions sent.
    public func brokerConnected() { apply(.brokerConnected) }

    /// The connection is gone (or an attempt failed: the client reports both the same way).
    public func brokerLost() {
        // A failed attempt while already disconnected tells the machine nothing new.
        guard machine.isConnectedToBroker else { return }
        apply(.brokerLost)
    }

    /// A message from the broker. Returns false when `topic` is not an ownership topic (nothing
    /// was done), true otherwise, malformed or not.
    @discardableResult
    public func handle(topic: String, payload: [UInt8]) -> Bool {
        guard let outcome = decoder.decode(topic: topic, payload: payload) else { return false }
        counters.received += 1
        switch outcome {
        case .input(let input): apply(input)
        case .ignored: break
        case .malformed(let reason):
            counters.malformed += 1
            // The 1st, 2nd, 4th, 8th… are logged: a peer that keeps sending garbage is seen
            // without flooding the journal.
            if counters.malformed & (counters.malformed - 1) == 0 {
                logger.warning(
                    "ownership: ignored a malformed message on \(topic): \(reason) (\(counters.malformed) so far)",
                    metadata: ["event": "ownership_malformed", "topic": "\(topic)"])
            }
        }
        return true
    }

    // MARK: - The fleet

    /// The fleet hears the device here: an advertisement, or the link's RSSI while connected.
    public func heard(_ device: DeviceID, _ inputs: OwnershipBidInputs) { apply(.heard(device, inputs)) }

    /// The fleet no longer hears the device here.
    public func notHeard(_ device: DeviceID) { apply(.notHeard(device)) }

    /// The device's link here came up or went down (a refused attempt is `linked: false`).
    public func linkChanged(_ device: DeviceID, linked: Bool) { apply(.linkChanged(device, linked: linked)) }

    /// Several fleet observations at once (`OwnershipFeed`): `heard`, `notHeard` and
    /// `linkChanged` only; anything else is not the fleet's to say and is ignored.
    public func observe(_ inputs: [OwnershipInput]) {
        for input in inputs {
            switch input {
            case .heard, .notHeard, .linkChanged: apply(input)
            default: continue
            }
        }
    }

    /// Each device's live owner as this gateway knows it (devices nobody owns, or whose owner
    /// lapsed, are left out: a dead gateway answers no command and owns nothing in status).
    public func owners() -> [DeviceID: GatewayID] {
        let now = clock.now()
        var owners: [DeviceID: GatewayID] = [:]
        for device in machine.knownDevices {
            if let owner = machine.owner(of: device)?.gateway, !machine.isLapsed(owner, now: now) { owners[device] = owner }
        }
        return owners
    }

    /// Whether the broker connection is up and older than the resync grace: the claims the broker
    /// kept have been heard, and `owners()` says what the cluster agreed.
    public func isPastResyncGrace() -> Bool { machine.isPastResyncGrace(now: clock.now()) }

    /// A reloaded configuration; what is known of claims, peers and links stays.
    public func reconfigure(_ configuration: OwnershipConfiguration) { machine.reconfigure(configuration) }

    // MARK: - Status

    /// What this gateway knows of every device, and its figures.
    public func status() -> OwnershipStatus {
        let devices = machine.knownDevices.map { device in
            let claim = machine.greatestClaim(for: device)
            return OwnershipStatus.Device(
                device: device, owner: claim?.gateway, epoch: claim?.epoch, linked: claim?.linked ?? false,
                ownedHere: machine.isOwnedHere(device), wantedHere: machine.wantsLink(to: device))
        }
        return OwnershipStatus(gateway: machine.gateway, brokerConnected: machine.isConnectedToBroker, devices: devices, counters: counters)
    }

    // MARK: - Stop

    /// Ends the timer and `decisions`, and deletes this gateway's retained bids (it hears nothing
    /// any more). Call before the client's clean stop, whose `offline` tells the peers at once
    /// that this gateway's devices are free. Later inputs are ignored.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        timer?.cancel()
        timer = nil
        publisher.publish(MQTTMessage(topic: topics.bids, payload: [], qos: 1, retain: true))
        decisionSink.finish()
    }

    // MARK: - Carrying out the machine's actions

    private func apply(_ input: OwnershipInput) {
        guard !stopped else { return }
        for action in machine.handle(input, now: clock.now()) { perform(action) }
    }

    private func perform(_ action: OwnershipAction) {
        switch action {
        case .publishClaim(let claim):
            guard let payload = OwnershipMessageDecoder.payload(claim) else { return }
            counters.claimsPublished += 1
            logger.info("ownership: claim \(claim)", metadata: ["event": "ownership_claim", "device": "\(claim.device)"])
            publisher.publish(MQTTMessage(topic: topics.owner(claim.device), payload: payload, qos: 1, retain: true))
        case .publishBids(let bids):
            guard let payload = OwnershipMessageDecoder.payload(OwnershipBids(gateway: machine.gateway, bids: bids)) else {
                logger.error("ownership: a bid could not be encoded", metadata: ["event": "ownership_bids_unencodable"])
                return
            }
            counters.bidsPublished += 1
            publisher.publish(MQTTMessage(topic: topics.bids, payload: payload, qos: 1, retain: true))
        case .publishHeartbeat:
            guard let payload = OwnershipMessageDecoder.payload(GatewayLiveness(gateway: machine.gateway, alive: true)) else { return }
            counters.heartbeatsPublished += 1
            // QoS 1: a heartbeat costs one acknowledgement per `renewal`, and a lost one brings
            // a peer one step nearer to taking this gateway's devices.
            publisher.publish(MQTTMessage(topic: topics.alive, payload: payload, qos: 1, retain: false))
        case .acquire(let device):
            counters.decisions += 1
            logger.notice("ownership: connecting \(device) here", metadata: ["event": "ownership_acquire", "device": "\(device)"])
            decisionSink.yield(.acquire(device))
        case .release(let device):
            counters.decisions += 1
            logger.notice("ownership: letting \(device) go", metadata: ["event": "ownership_release", "device": "\(device)"])
            decisionSink.yield(.release(device))
        case .scheduleTick(let instant):
            schedule(at: instant)
        }
    }

    /// The machine's one timer: the earlier request, if any, is replaced.
    private func schedule(at instant: MonotonicInstant) {
        timer?.cancel()
        timerGeneration &+= 1
        let generation = timerGeneration
        timer = Task { [clock, weak self] in
            guard (try? await clock.sleep(until: instant)) != nil else { return }
            await self?.timerFired(generation)
        }
    }

    private func timerFired(_ generation: UInt64) {
        guard generation == timerGeneration else { return }
        timer = nil
        apply(.tick)
    }
}

/// One gateway's view of the ownership of its devices (`OwnershipCoordinator.status()`).
public struct OwnershipStatus: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var device: DeviceID
        /// The greatest claim's gateway; nil when nobody owns the device (never claimed, released).
        public var owner: GatewayID?
        public var epoch: UInt64?
        /// Whether the owner says it holds the link.
        public var linked: Bool
        /// The greatest claim names this gateway.
        public var ownedHere: Bool
        /// This gateway has asked the fleet to connect the device (`acquire` without a later `release`).
        public var wantedHere: Bool
    }

    public var gateway: GatewayID
    public var brokerConnected: Bool
    /// In address order.
    public var devices: [Device]
    public var counters: OwnershipCounters

    public func device(_ id: DeviceID) -> Device? { devices.first { $0.device == id } }
}

/// What one coordinator has read and written since it started.
public struct OwnershipCounters: Sendable, Equatable {
    /// Messages on ownership topics, malformed ones included.
    public var received = 0
    public var malformed = 0
    public var claimsPublished = 0
    public var bidsPublished = 0
    public var heartbeatsPublished = 0
    /// `acquire`s and `release`s handed to the fleet.
    public var decisions = 0
}
