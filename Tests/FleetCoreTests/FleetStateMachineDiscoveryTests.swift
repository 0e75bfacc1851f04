import PropertyBased
import Testing
@testable import FleetCore

/// Discovery per adapter, as the fleet machine drives it: which calls it asks for, one at a time
/// per adapter, none to an adapter that is off or while bluetoothd is away, backoff after a
/// refusal, and answers that come too late changing nothing.
@Suite("FleetStateMachine: discovery")
struct FleetStateMachineDiscoveryTests {
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")
    static let strap = PoolFixture.device(1)
    static let t0 = MonotonicInstant.zero
    static let notReady = DeviceEvent.Failure(.notReady, message: "Resource Not Ready")
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"

    /// A discovery call the machine asked for, without its number.
    struct Call: Equatable, CustomStringConvertible {
        var adapter: AdapterID
        var call: DiscoveryCall
        init(_ adapter: AdapterID, _ call: DiscoveryCall) {
            self.adapter = adapter
            self.call = call
        }
        var description: String { "\(adapter) \(call.methodName)" }
    }

    static func calls(_ actions: [FleetStateMachine.Action]) -> [Call] {
        actions.compactMap { if case .discover(let adapter, let call, _) = $0 { Call(adapter, call) } else { nil } }
    }

    static func numbered(_ actions: [FleetStateMachine.Action]) -> [(AdapterID, UInt64)] {
        actions.compactMap { if case .discover(let adapter, _, let number) = $0 { (adapter, number) } else { nil } }
    }

    static func retryTimers(_ actions: [FleetStateMachine.Action]) -> [MonotonicInstant?] {
        actions.compactMap { if case .scheduleDiscoveryRetry(let instant) = $0 { instant } else { nil } }
    }

    static func configuration(pool: Bool = false, adapters: Set<AdapterID> = []) -> FleetRuntimeConfiguration {
        FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: strap, name: nil, className: "strap")],
            classes: ["strap": DeviceStateMachine.Configuration()], poolClassName: "strap", poolEnabled: pool,
            pool: PoolConfiguration(maxConnections: 4, defaultSlotsPerAdapter: 2), adapters: adapters, scanUUIDs: [heartRate],
            minimumRSSI: -80)
    }

    /// Started, bluetoothd present with `powered` adapters on, nothing asked of discovery yet.
    static func running(_ configuration: FleetRuntimeConfiguration = configuration(), powered: [AdapterID] = [hci0]) -> FleetStateMachine {
        var fleet = FleetStateMachine(configuration: configuration, now: t0, seed: 1)
        _ = fleet.handle(.start, now: t0)
        _ = fleet.handle(.bluetoothdAppeared(held: [], adapters: Set(powered)), now: t0)
        for adapter in powered {
            _ = fleet.handle(.adapterChanged(adapter, powered: true), now: t0)
            _ = fleet.handle(.adapterPowerChanged(adapter, powered: true), now: t0)
        }
        _ = fleet.handle(.started, now: t0)
        _ = fleet.handle(.evaluate, now: t0)
        return fleet
    }

    /// Feeds `input`, then answers every call it leads to as done, until none is asked; returns
    /// the calls in order.
    @discardableResult
    static func settle(_ fleet: inout FleetStateMachine, after input: FleetStateMachine.Input, now: MonotonicInstant = t0) -> [Call] {
        var actions = fleet.handle(input, now: now)
        var made: [Call] = []
        while case let pending = numbered(actions), !pending.isEmpty {
            made += calls(actions)
            actions = pending.flatMap { fleet.handle(.discoveryFinished($0.0, number: $0.1, failure: nil), now: now) }
        }
        return made
    }

    // MARK: - What is asked

    @Test func aMissingDeviceMakesEveryPoweredAdapterDiscoverUnfilteredOneCallAtATime() {
        var fleet = Self.running(powered: [Self.hci0, Self.hci1])
        let first = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        // Each adapter's filter first, and nothing more until bluetoothd answers it.
        #expect(Self.calls(first) == [.init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci1, .setFilter(.anyDevice))])
        #expect(Self.calls(fleet.handle(.evaluate, now: Self.t0)).isEmpty, "one call in flight per adapter")
        let numbers = Self.numbered(first)
        let started = fleet.handle(.discoveryFinished(Self.hci0, number: numbers[0].1, failure: nil), now: Self.t0)
        #expect(Self.calls(started) == [.init(Self.hci0, .start)])
        _ = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(started)[0].1, failure: nil), now: Self.t0)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == true)
        // Found: discovery stops, the pool not looking; hci1 stops once its filter is answered.
        #expect(Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, false))) == [.init(Self.hci0, .stop)])
        #expect(Self.calls(fleet.handle(.discoveryFinished(Self.hci1, number: numbers[1].1, failure: nil), now: Self.t0)).isEmpty)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == false)
    }

    /// A pinned device asleep that bluetoothd has never heard (pinned before its first wake) is
    /// looked for, unfiltered: its pending Connect needs the object its first advertisement
    /// brings. Once heard, the sleeper needs no discovery.
    @Test func aSleeperNeverHeardIsLookedForUntilItsFirstAdvertisement() {
        var fleet = Self.running()
        #expect(Self.settle(&fleet, after: .evaluate).isEmpty)
        let asleep = Self.settle(
            &fleet, after: .deviceOutput(.lifecycle(Self.strap, .stateChanged(from: .idle, to: .asleep, session: 0, cause: nil))))
        #expect(asleep == [.init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start)], "\(asleep)")
        let heard = Self.settle(
            &fleet, after: .device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]))
        #expect(heard == [.init(Self.hci0, .stop)], "\(heard)")
    }

    /// bluetoothd 5.66 stops an adapter's discovery for a `Pair` and starts it again only 5 s
    /// after the bonding (`suspend_discovery`/`resume_discovery`): when a device's pairing ends
    /// on an adapter where the fleet's discovery runs, discovery there is stopped and started at
    /// once (a `StartDiscovery` after a stop starts the kernel's discovery without that wait).
    /// The real stack's scale, waking beside a cuff that had just bonded, went unheard 5 s.
    @Test func aPairingThatEndedRestartsTheDiscoveryRunningOnItsAdapter() {
        let cuff = PoolFixture.device(2)
        var configuration = Self.configuration()
        configuration.pinned.append(FleetRuntimeConfiguration.PinnedDevice(id: cuff, name: nil, className: "strap"))
        var fleet = Self.running(configuration, powered: [Self.hci0, Self.hci1])
        // The strap sleeps unheard: every adapter discovers unfiltered for it.
        Self.settle(&fleet, after: .deviceOutput(.lifecycle(Self.strap, .stateChanged(from: .idle, to: .asleep, session: 0, cause: nil))))
        #expect(fleet.adapters[Self.hci0]?.discovery.running == true && fleet.adapters[Self.hci1]?.discovery.running == true)
        // The cuff links on hci0 and bonds.
        _ = fleet.handle(.device(cuff, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        #expect(Self.settle(&fleet, after: .deviceOutput(.lifecycle(cuff, .stateChanged(from: .discovering, to: .pairing, session: 1, cause: nil)))).isEmpty)
        let paired = Self.settle(
            &fleet, after: .deviceOutput(.lifecycle(cuff, .stateChanged(from: .pairing, to: .discovering, session: 1, cause: nil))))
        #expect(paired == [.init(Self.hci0, .stop), .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start)], "only the adapter the pairing went through: \(paired)")
        #expect(fleet.adapters[Self.hci0]?.discovery.running == true)
        // Without a discovery of ours there, a pairing asks nothing.
        Self.settle(&fleet, after: .device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]))
        #expect(fleet.adapters[Self.hci0]?.discovery.running == false)
        _ = fleet.handle(.deviceOutput(.lifecycle(cuff, .stateChanged(from: .discovering, to: .pairing, session: 1, cause: nil))), now: Self.t0)
        #expect(Self.settle(&fleet, after: .deviceOutput(.lifecycle(cuff, .stateChanged(from: .pairing, to: .ready, session: 1, cause: nil)))).isEmpty)
        // A `Pair` by command (outside the machines) says so itself.
        Self.settle(&fleet, after: .scan(until: Self.t0.advanced(by: .seconds(30))))
        #expect(Self.settle(&fleet, after: .pairingEnded(adapter: Self.hci0)) == [
            .init(Self.hci0, .stop), .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start),
        ])
    }

    /// A scan asked for (`nearby` with a scan) makes every powered adapter discover unfiltered
    /// until its deadline, with the timer set for it; a later one extends it, an earlier one
    /// does not cut it short.
    @Test func aScanAskedForDiscoversUntilItsDeadline() {
        var fleet = Self.running(powered: [Self.hci0, Self.hci1])
        let until = Self.t0.advanced(by: .seconds(5))
        #expect(Self.settle(&fleet, after: .scan(until: until)) == [
            .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci1, .setFilter(.anyDevice)),
            .init(Self.hci0, .start), .init(Self.hci1, .start),
        ])
        #expect(fleet.discoveryRetryTimer == until)
        #expect(Self.settle(&fleet, after: .scan(until: Self.t0.advanced(by: .seconds(2)))).isEmpty)
        #expect(fleet.scanUntil == until)
        let later = Self.t0.advanced(by: .seconds(8))
        _ = fleet.handle(.scan(until: later), now: Self.t0)
        #expect(Self.settle(&fleet, after: .retryDiscovery, now: until).isEmpty, "extended: still scanning")
        #expect(Self.settle(&fleet, after: .retryDiscovery, now: later) == [.init(Self.hci0, .stop), .init(Self.hci1, .stop)])
        #expect(fleet.scanUntil == nil)
    }

    /// A search for a missing device is stopped and started again every
    /// `searchRefreshInterval` (a stalled kernel scan, seen on the real stack), with the timer
    /// set for it; a search that found its device is not.
    @Test func aSearchForAMissingDeviceIsRefreshedOnItsTimer() {
        var fleet = Self.running(powered: [Self.hci0])
        Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, true)))
        #expect(fleet.adapters[Self.hci0]?.discovery.startedAt == Self.t0)
        let due = Self.t0.advanced(by: AdapterDiscovery.searchRefreshInterval)
        #expect(fleet.discoveryRetryTimer == due)
        let early = Self.t0.advanced(by: AdapterDiscovery.searchRefreshInterval - .milliseconds(1))
        #expect(Self.settle(&fleet, after: .retryDiscovery, now: early).isEmpty)
        #expect(Self.settle(&fleet, after: .retryDiscovery, now: due) == [
            .init(Self.hci0, .stop), .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start),
        ])
        #expect(fleet.adapters[Self.hci0]?.discovery.startedAt == due)
        #expect(fleet.adapters[Self.hci0]?.discovery.restartRequested == false)
        // Found: discovery stops, and nothing is refreshed any more.
        #expect(Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, false)), now: due) == [.init(Self.hci0, .stop)])
        let later = due.advanced(by: AdapterDiscovery.searchRefreshInterval * 2)
        #expect(Self.settle(&fleet, after: .retryDiscovery, now: later).isEmpty)
    }

    @Test func nothingIsAskedOfAnAdapterThatIsOffNorWhileBluetoothdIsAway() {
        var fleet = Self.running(powered: [])
        _ = fleet.handle(.adapterChanged(Self.hci0, powered: false), now: Self.t0)
        #expect(Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, true))).isEmpty, "hci0 is not powered")
        // Powered: asked at once.
        #expect(Self.settle(&fleet, after: .adapterChanged(Self.hci0, powered: true)) == [
            .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start),
        ])
        // bluetoothd goes: nothing is asked (discovery ended with it), and it starts again on return.
        #expect(Self.settle(&fleet, after: .bluetoothdVanished).isEmpty)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == false)
        #expect(Self.settle(&fleet, after: .bluetoothdAppeared(held: [], adapters: [Self.hci0])) == [
            .init(Self.hci0, .setFilter(.anyDevice)), .init(Self.hci0, .start),
        ])
        // Powered off: discovery is over without a call.
        #expect(Self.settle(&fleet, after: .adapterChanged(Self.hci0, powered: false)).isEmpty)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == false && fleet.adapters[Self.hci0]?.discovery.inFlight == nil)
    }

    @Test func thePoolSearchesWithItsFilterAndAMissingDeviceWidensItWithoutARestart() {
        let poolFilter = DiscoveryFilter(uuids: [Self.heartRate], minimumRSSI: -80)
        var fleet = FleetStateMachine(configuration: Self.configuration(pool: true), now: Self.t0, seed: 1)
        _ = fleet.handle(.start, now: Self.t0)
        _ = fleet.handle(.bluetoothdAppeared(held: [], adapters: [Self.hci0]), now: Self.t0)
        _ = fleet.handle(.adapterChanged(Self.hci0, powered: true), now: Self.t0)
        #expect(Self.settle(&fleet, after: .evaluate) == [.init(Self.hci0, .setFilter(poolFilter)), .init(Self.hci0, .start)])
        #expect(Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, true))) == [.init(Self.hci0, .setFilter(.anyDevice))])
        #expect(Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, false))) == [.init(Self.hci0, .setFilter(poolFilter))])
        // A reload's new pool filter reaches the running discovery.
        var narrower = Self.configuration(pool: true)
        narrower.minimumRSSI = -60
        #expect(Self.settle(&fleet, after: .reload(narrower, objects: [:])) == [
            .init(Self.hci0, .setFilter(DiscoveryFilter(uuids: [Self.heartRate], minimumRSSI: -60))),
        ])
    }

    // MARK: - Failures

    @Test func aRefusedCallIsRetriedAfterAJitteredDoublingBackoffAndPublished() {
        var fleet = Self.running()
        var actions = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        var now = Self.t0
        var previousDelay: Duration = .zero
        for inARow in 1...4 {
            let (adapter, number) = Self.numbered(actions)[0]
            let failed = fleet.handle(.discoveryFinished(adapter, number: number, failure: Self.notReady), now: now)
            let published = failed.compactMap { action -> (Int, Duration)? in
                if case .publish(.discoveryFailed(Self.hci0, .setFilter, _, let count, let retryIn)) = action { (count, retryIn) } else { nil }
            }
            #expect(published.count == 1 && published[0].0 == inARow)
            let retryAt = try? #require(Self.retryTimers(failed).first ?? nil)
            guard let retryAt else { return }
            let delay = retryAt.duration(since: now)
            let full = AdapterDiscovery.firstRetryDelay * (1 << (inARow - 1))
            #expect(delay >= full / 2 && delay <= full, "failure \(inARow): \(delay)")
            #expect(delay > previousDelay / 2)
            previousDelay = delay
            #expect(Self.calls(fleet.handle(.evaluate, now: now.advanced(by: delay / 2))).isEmpty, "nothing before the backoff ends")
            now = retryAt
            actions = fleet.handle(.retryDiscovery, now: now)
            #expect(Self.calls(actions) == [.init(Self.hci0, .setFilter(.anyDevice))], "the same call again")
        }
        #expect(fleet.adapters[Self.hci0]?.discovery.failures == 4)
        // Done at last: the backoff is forgotten and the timer cancelled.
        let (adapter, number) = Self.numbered(actions)[0]
        let done = fleet.handle(.discoveryFinished(adapter, number: number, failure: nil), now: now)
        #expect(Self.calls(done) == [.init(Self.hci0, .start)])
        #expect(fleet.adapters[Self.hci0]?.discovery.consecutiveFailures == 0)
        #expect(fleet.adapters[Self.hci0]?.discovery.retryAt == nil)
    }

    @Test func aBackoffForACallNobodyNeedsAnyMoreEndsWithoutArmingTheTimerAgain() {
        var fleet = Self.running()
        let asked = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        let failed = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(asked)[0].1, failure: Self.notReady), now: Self.t0)
        let due = try? #require(Self.retryTimers(failed).first ?? nil)
        // Found before the retry: discovery is as wanted (off), the backoff is moot.
        let found = fleet.handle(.deviceOutput(.resolving(Self.strap, false)), now: Self.t0)
        #expect(Self.retryTimers(found) == [nil], "the timer is cancelled")
        #expect(fleet.adapters[Self.hci0]?.discovery.retryAt == nil)
        let late = fleet.handle(.retryDiscovery, now: due ?? Self.t0)
        #expect(Self.retryTimers(late).isEmpty && Self.calls(late).isEmpty, "nothing asked, no timer: \(late)")
    }

    @Test func aNewErrorInAStreakIsCountedFromOneForTheJournal() {
        var fleet = Self.running()
        var actions = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        var now = Self.t0
        var counts: [Int] = []
        for failure in [Self.notReady, Self.notReady, DeviceEvent.Failure(.failed, message: "Operation failed"), Self.notReady] {
            let failed = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(actions)[0].1, failure: failure), now: now)
            counts += failed.compactMap { if case .publish(.discoveryFailed(_, _, _, let count, _)) = $0 { count } else { nil } }
            now = fleet.adapters[Self.hci0]?.discovery.retryAt ?? now
            actions = fleet.handle(.retryDiscovery, now: now)
        }
        #expect(counts == [1, 2, 1, 1])
        #expect(fleet.adapters[Self.hci0]?.discovery.consecutiveFailures == 4, "the backoff counts every failure")
    }

    @Test func anAnswerForADiscoveryThatIsNoMoreChangesNothing() {
        var fleet = Self.running()
        let asked = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        let (_, stale) = Self.numbered(asked)[0]
        _ = fleet.handle(.bluetoothdVanished, now: Self.t0)
        let again = fleet.handle(.bluetoothdAppeared(held: [], adapters: [Self.hci0]), now: Self.t0)
        #expect(Self.calls(again) == [.init(Self.hci0, .setFilter(.anyDevice))])
        let late = fleet.handle(.discoveryFinished(Self.hci0, number: stale, failure: Self.notReady), now: Self.t0)
        #expect(late.isEmpty, "the call before bluetoothd left: \(late)")
        #expect(fleet.adapters[Self.hci0]?.discovery.inFlight == .setFilter(.anyDevice))
    }

    @Test func startDiscoveryInProgressIsRunningAndARefusedStopHasNothingToStop() {
        var fleet = Self.running()
        var actions = fleet.handle(.deviceOutput(.resolving(Self.strap, true)), now: Self.t0)
        actions = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(actions)[0].1, failure: nil), now: Self.t0)
        let inProgress = DeviceEvent.Failure(.inProgress, message: "Operation already in progress")
        _ = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(actions)[0].1, failure: inProgress), now: Self.t0)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == true)
        #expect(fleet.adapters[Self.hci0]?.discovery.failures == 0)
        actions = fleet.handle(.deviceOutput(.resolving(Self.strap, false)), now: Self.t0)
        let none = DeviceEvent.Failure(.failed, message: "No discovery started")
        let stopped = fleet.handle(.discoveryFinished(Self.hci0, number: Self.numbered(actions)[0].1, failure: none), now: Self.t0)
        #expect(Self.calls(stopped).isEmpty && Self.retryTimers(stopped).isEmpty)
        #expect(fleet.adapters[Self.hci0]?.discovery.running == false)
    }

    @Test func aForgottenDeviceIsLookedForNoMore() {
        var fleet = Self.running(Self.configuration())
        Self.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, true)))
        var none = Self.configuration()
        none.pinned = []
        #expect(Self.settle(&fleet, after: .reload(none, objects: [:])) == [.init(Self.hci0, .stop)])
        #expect(fleet.resolving.isEmpty)
    }

    // MARK: - Whatever happens

    /// Whatever bluetoothd answers and whatever happens to the adapters, the machine never asks
    /// an adapter that is off or a bluetoothd that is away, never has two calls in flight on one
    /// adapter, never asks during a backoff; and once bluetoothd answers everything and the
    /// backoff timers fire, each adapter's discovery is what is wanted.
    @Test func callsKeepTheRulesAndDiscoverySettlesAsWanted() async {
        let moves = Gen.int(in: 0..<10).array(of: 0...80)
        await propertyCheck(count: 300, input: moves, Gen.uint64()) { moves, seed in
            var random = SeededRandom(seed: seed)
            var fleet = Self.running(Self.configuration(pool: seed % 2 == 0), powered: [Self.hci0, Self.hci1])
            var now = Self.t0
            // What the start asked for is answered like the rest.
            var outstanding = fleet.adapters.compactMap { id, record in record.discovery.inFlight.map { _ in (id, record.discovery.inFlightNumber) } }
            var timer: MonotonicInstant?
            func feed(_ input: FleetStateMachine.Input) {
                let before = fleet
                let actions = fleet.handle(input, now: now)
                for (adapter, number) in Self.numbered(actions) {
                    #expect(fleet.bluetoothdPresent && fleet.adapters[adapter]?.powered == true, "asked \(adapter) while off or away")
                    #expect(before.adapters[adapter]?.discovery.inFlight == nil || input.answers(adapter), "two calls in flight on \(adapter)")
                    if let retryAt = fleet.adapters[adapter]?.discovery.retryAt { #expect(now >= retryAt) }
                    outstanding.append((adapter, number))
                }
                for instant in Self.retryTimers(actions) { timer = instant }
            }
            for move in moves {
                now = now.advanced(by: .milliseconds(Int64(random.next() % 3000)))
                let adapter = random.next() % 2 == 0 ? Self.hci0 : Self.hci1
                switch move {
                case 0, 1: feed(.deviceOutput(.resolving(Self.strap, random.next() % 2 == 0)))
                case 2: feed(.adapterChanged(adapter, powered: random.next() % 2 == 0))
                case 3: feed(random.next() % 2 == 0 ? .bluetoothdVanished : .bluetoothdAppeared(held: [], adapters: [Self.hci0, Self.hci1]))
                case 4, 5, 6:
                    guard !outstanding.isEmpty else { continue }
                    let (adapter, number) = outstanding.remove(at: Int(random.next() % UInt64(outstanding.count)))
                    let failure: DeviceEvent.Failure? = random.next() % 3 == 0 ? Self.notReady : nil
                    feed(.discoveryFinished(adapter, number: number, failure: failure))
                case 7: if let due = timer, due <= now { timer = nil; feed(.retryDiscovery) }
                case 8: feed(.evaluate)
                default: feed(.adapterRemoved(adapter))
                }
            }
            // bluetoothd back with both adapters on, and every answer a success from now on.
            feed(.bluetoothdAppeared(held: [], adapters: [Self.hci0, Self.hci1]))
            feed(.adapterChanged(Self.hci0, powered: true))
            feed(.adapterChanged(Self.hci1, powered: true))
            for _ in 0..<40 {
                // Backoffs end; the refresh of a search for the missing strap is left to the end.
                if let due = timer, fleet.adapters.values.contains(where: { $0.discovery.retryAt != nil }) {
                    now = max(now, due)
                    timer = nil
                    feed(.retryDiscovery)
                }
                guard !outstanding.isEmpty || fleet.adapters.values.contains(where: { $0.discovery.retryAt != nil }) else { break }
                let answers = outstanding
                outstanding = []
                for (adapter, number) in answers { feed(.discoveryFinished(adapter, number: number, failure: nil)) }
            }
            for adapter in [Self.hci0, Self.hci1] {
                guard let record = fleet.adapters[adapter] else { continue }
                let wanted = fleet.wantedDiscovery(on: record)
                #expect(record.discovery.running == (wanted != nil), "\(adapter): \(record.discovery) for \(String(describing: wanted))")
                if let wanted { #expect(record.discovery.appliedFilter == wanted) }
                #expect(record.discovery.inFlight == nil)
            }
            // Settled: a late timer asks for nothing and arms nothing, except the refresh of a
            // search for the missing strap (a stop, where discovery runs unfiltered).
            let late = fleet.handle(.retryDiscovery, now: now.advanced(by: .seconds(3600)))
            for call in Self.calls(late) {
                let wanted = fleet.adapters[call.adapter].flatMap { fleet.wantedDiscovery(on: $0) }
                #expect(call.call == .stop && wanted == .anyDevice, "\(call) for \(String(describing: wanted))")
            }
            if fleet.resolving.isEmpty { #expect(!Self.retryTimers(late).contains { $0 != nil }, "\(late)") }
        }
    }
}

extension FleetStateMachine.Input {
    /// Whether this input is an answer about `adapter` (after which a next call may follow).
    func answers(_ adapter: AdapterID) -> Bool {
        if case .discoveryFinished(adapter, _, _) = self { return true }
        return false
    }
}

