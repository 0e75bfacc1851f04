import FleetCore
import Testing

/// The fleet machine, one story per test: feed facts, check the exact actions. No bus, no
/// actors, no clock but the one each input is given.
@Suite("FleetStateMachine")
struct FleetStateMachineTests {
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")
    static let strap = PoolFixture.device(1)
    static let watch = PoolFixture.device(2)
    static let band = PoolFixture.device(3)
    static let t0 = MonotonicInstant.zero

    static func configuration(pinned: [DeviceID] = [strap], pool: Bool = false) -> FleetRuntimeConfiguration {
        FleetRuntimeConfiguration(
            pinned: pinned.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, name: nil, className: "strap") },
            classes: ["strap": DeviceStateMachine.Configuration()], poolClassName: "pool", poolEnabled: pool,
            pool: PoolConfiguration(maxConnections: 4, defaultSlotsPerAdapter: 2))
    }

    /// A started machine that has seen bluetoothd with hci0 powered, and the inputs' actions.
    static func running(_ configuration: FleetRuntimeConfiguration, restored: [FleetStateMachine.RestoredDevice] = [])
        -> FleetStateMachine
    {
        var fleet = FleetStateMachine(configuration: configuration, now: t0, seed: 1)
        _ = fleet.handle(.restore(restored), now: t0)
        _ = fleet.handle(.start, now: t0)
        _ = fleet.handle(.bluetoothdAppeared(held: [], adapters: [hci0]), now: t0)
        _ = fleet.handle(.adapterChanged(hci0, powered: true), now: t0)
        _ = fleet.handle(.adapterPowerChanged(hci0, powered: true), now: t0)
        _ = fleet.handle(.started, now: t0)
        _ = fleet.handle(.evaluate, now: t0)
        return fleet
    }

    static func deliveries(_ actions: [FleetStateMachine.Action], to id: DeviceID) -> [DeviceEvent] {
        actions.compactMap { if case .deliver(id, let event) = $0 { event } else { nil } }
    }

    static func created(_ actions: [FleetStateMachine.Action]) -> [DeviceID] {
        actions.compactMap { if case .createDevice(let machine, _) = $0 { machine.device } else { nil } }
    }

    // MARK: - Start and restore

    @Test func startCreatesThePinnedDevicesAndStartedWantsThem() {
        var fleet = FleetStateMachine(configuration: Self.configuration(), now: Self.t0, seed: 1)
        let start = fleet.handle(.start, now: Self.t0)
        #expect(Self.created(start) == [Self.strap])
        #expect(Self.deliveries(start, to: Self.strap).isEmpty, "nothing is asked of it before bluetoothd is followed")
        let started = fleet.handle(.started, now: Self.t0)
        #expect(Self.deliveries(started, to: Self.strap) == [.policyUpdated(wanted: true)])
        #expect(started.contains(.requestEvaluation))
    }

    @Test func restoredPoolDevicesAreCandidatesAgainOnlyWhenThePoolIsOn() {
        let known = FleetStateMachine.RestoredDevice(
            id: Self.watch, membership: .pool, name: "Watch", servicesSeen: ["180d"], lastAdapter: Self.hci1, hasBeenReady: true)
        for poolOn in [true, false] {
            var fleet = FleetStateMachine(configuration: Self.configuration(pool: poolOn), now: Self.t0, seed: 1)
            _ = fleet.handle(.restore([known]), now: Self.t0)
            let start = fleet.handle(.start, now: Self.t0)
            #expect(Self.created(start) == (poolOn ? [Self.strap, Self.watch] : [Self.strap]))
            if poolOn {
                // It keeps what the state file knew: its name, last adapter, services and history.
                #expect(fleet.devices[Self.watch]?.name == "Watch")
                #expect(fleet.devices[Self.watch]?.lastAdapter == Self.hci1)
                let machine = start.compactMap { action -> DeviceStateMachine? in
                    if case .createDevice(let machine, _) = action, machine.device == Self.watch { machine } else { nil }
                }.first
                #expect(machine?.servicesSeen == ["180d"])
                #expect(machine?.hasBeenReady == true)
                #expect(fleet.devices[Self.watch]?.pinned == false)
            }
        }
    }

    @Test func aDeviceBluetoothdForgotIsOfferedItsLastAdapterWhenBluetoothdAppears() {
        let known = FleetStateMachine.RestoredDevice(id: Self.strap, membership: .pinned, lastAdapter: Self.hci0)
        var fleet = FleetStateMachine(configuration: Self.configuration(pinned: [Self.strap, Self.watch]), now: Self.t0, seed: 1)
        _ = fleet.handle(.restore([known]), now: Self.t0)
        _ = fleet.handle(.start, now: Self.t0)
        let appeared = fleet.handle(.bluetoothdAppeared(held: [], adapters: [Self.hci0], powered: [Self.hci0]), now: Self.t0)
        // Where to connect and what is powered before bluetoothd's return makes it pursue.
        #expect(Self.deliveries(appeared, to: Self.strap) == [.adapterPowered(Self.hci0), .deviceFound(adapter: Self.hci0), .bluetoothdAppeared])
        // The watch has no last adapter: it waits for discovery.
        #expect(Self.deliveries(appeared, to: Self.watch) == [.adapterPowered(Self.hci0), .bluetoothdAppeared])
        // A held device is not offered its last adapter: its object will be reported.
        var again = FleetStateMachine(configuration: Self.configuration(), now: Self.t0, seed: 1)
        _ = again.handle(.restore([known]), now: Self.t0)
        _ = again.handle(.start, now: Self.t0)
        let held = again.handle(.bluetoothdAppeared(held: [Self.strap], adapters: [Self.hci0]), now: Self.t0)
        #expect(Self.deliveries(held, to: Self.strap) == [.bluetoothdAppeared])
    }

    @Test func deviceSeedsAreDrawnFromTheFleetSeedInCreationOrder() {
        func seeds(_ seed: UInt64) -> [UInt64] {
            var fleet = FleetStateMachine(configuration: Self.configuration(pinned: [Self.strap, Self.watch]), now: Self.t0, seed: seed)
            return fleet.handle(.start, now: Self.t0).compactMap { if case .createDevice(_, let seed) = $0 { seed } else { nil } }
        }
        #expect(seeds(7) == seeds(7))
        #expect(seeds(7) != seeds(8))
        #expect(Set(seeds(7)).count == 2)
    }

    // MARK: - bluetoothd and adapters

    @Test func bluetoothdVanishingDropsEveryLinkAndTellsEveryDevice() {
        var fleet = Self.running(Self.configuration())
        _ = fleet.handle(.device(Self.strap, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        #expect(fleet.devices[Self.strap]?.link.adapter == Self.hci0)
        let vanished = fleet.handle(.bluetoothdVanished, now: Self.t0)
        #expect(fleet.devices[Self.strap]?.link == .disconnected)
        #expect(fleet.devices[Self.strap]?.objects.isEmpty == true)
        #expect(!fleet.bluetoothdPresent)
        #expect(Self.deliveries(vanished, to: Self.strap) == [.bluetoothdVanished])
        #expect(vanished.contains(.publish(.bluetoothdVanished)))
        // No attempt is granted while bluetoothd is gone, however much the device asks.
        _ = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        let evaluation = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(evaluation, to: Self.strap).isEmpty)
        // It returns: the device hears it, and an evaluation grants the attempt.
        let returned = fleet.handle(.bluetoothdAppeared(held: [Self.strap], adapters: [Self.hci0]), now: Self.t0)
        #expect(Self.deliveries(returned, to: Self.strap) == [.bluetoothdAppeared])
        _ = fleet.handle(.device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        let granted = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(granted, to: Self.strap) == [.attemptGranted(adapter: Self.hci0)])
        #expect(fleet.devices[Self.strap]?.link == .attempting(Self.hci0))
    }

    /// What status says a wanted device without a link waits for: not heard, no free slot (hci0
    /// has 2, both linked), its adapter's turn (placed, another's attempt in flight), held.
    @Test func aWaitingDeviceSaysWhatItWaitsFor() throws {
        let (first, second, third, unheard) = (Self.strap, Self.watch, PoolFixture.device(3), PoolFixture.device(4))
        var fleet = Self.running(Self.configuration(pinned: [first, second, third, unheard]))
        #expect(fleet.waitingReason(of: first) == nil, "nothing asked yet")
        _ = fleet.handle(.deviceOutput(.requestAttempt(unheard)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.waitingReason(of: unheard) == .notHeard)
        // Heard only through an adapter that is not powered: nothing to connect through either.
        _ = fleet.handle(.device(unheard, .deviceFound(adapter: Self.hci1), objects: [.init(adapter: Self.hci1, rssi: -50)]), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.waitingReason(of: unheard) == .notHeard, "hci1 is off: no slot is what it lacks")
        for id in [first, second, third] {
            _ = fleet.handle(.device(id, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        }
        _ = fleet.handle(.deviceOutput(.requestAttempt(first)), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(second)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        // One attempt at a time on hci0: the other, placed, waits its turn.
        let attempting = [first, second].filter { fleet.devices[$0]?.link == .attempting(Self.hci0) }
        #expect(attempting.count == 1)
        let waitingTurn = [first, second].first { !attempting.contains($0) }
        #expect(waitingTurn.map { fleet.waitingReason(of: $0) } == .attemptTurn)
        #expect(fleet.waitingReason(of: attempting[0]) == nil, "attempting: not waiting")
        let other = try #require(waitingTurn)
        _ = fleet.handle(.deviceOutput(.attemptFinished(attempting[0], adapter: Self.hci0, outcome: .connected)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: other) == [.attemptGranted(adapter: Self.hci0)])
        _ = fleet.handle(.deviceOutput(.attemptFinished(other, adapter: Self.hci0, outcome: .connected)), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(third)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.waitingReason(of: third) == .noFreeSlot, "both slots are linked")
        _ = fleet.handle(.command(.disconnect(third)), now: Self.t0)
        #expect(fleet.waitingReason(of: third) == .held)
        // Several gateways: a device not given to this one waits for that.
        _ = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        #expect(fleet.waitingReason(of: unheard) == .awaitingOwnership)
    }

    @Test func aSleepingDevicesPendingConnectHoldsASlotButLeavesTheAdapterFreeForAttempts() {
        // hci0 has 2 slots: the cuff's pending Connect stands on one, the strap still gets its
        // attempt at once, and a third device finds no slot.
        let (cuff, strap, third) = (Self.strap, Self.watch, PoolFixture.device(3))
        var fleet = Self.running(Self.configuration(pinned: [cuff, strap, third]))
        for id in [cuff, strap, third] {
            _ = fleet.handle(.device(id, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        }
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci0)])
        _ = fleet.handle(.deviceOutput(.attemptFinished(cuff, adapter: Self.hci0, outcome: .standing)), now: Self.t0)
        #expect(fleet.devices[cuff]?.link == .standing(Self.hci0))
        _ = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: strap) == [.attemptGranted(adapter: Self.hci0)],
            "a standing Connect is no attempt in flight")
        _ = fleet.handle(.deviceOutput(.attemptFinished(strap, adapter: Self.hci0, outcome: .connected)), now: Self.t0)
        #expect(fleet.devices.values.filter { $0.link.adapter == Self.hci0 }.count == 2, "the standing Connect holds its slot")
        _ = fleet.handle(.deviceOutput(.requestAttempt(third)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: third).isEmpty, "both slots are held")
        // The cuff's pending Connect ends without it: the slot is free, but stays the pinned
        // cuff's place, and its next pending Connect is placed there again.
        _ = fleet.handle(.deviceOutput(.standingEnded(cuff, adapter: Self.hci0)), now: Self.t0)
        #expect(fleet.devices[cuff]?.link == .disconnected)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        let next = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(next, to: cuff) == [.attemptGranted(adapter: Self.hci0)])
        #expect(Self.deliveries(next, to: third).isEmpty)
    }

    @Test func aBondedDeviceIsPlacedWhereItsKeysAreWhileThatAdapterReachesIt() {
        // Heard loudly on hci0, bonded through hci1: its Connect goes to hci1 (through hci0 it
        // would have to bond again, and a cuff that keeps one bond would lose the first).
        let cuff = Self.strap
        var fleet = Self.running(Self.configuration(pinned: [cuff]))
        _ = fleet.handle(.adapterChanged(Self.hci1, powered: true), now: Self.t0)
        _ = fleet.handle(.adapterPowerChanged(Self.hci1, powered: true), now: Self.t0)
        let objects: [FleetStateMachine.DeviceObject] = [
            .init(adapter: Self.hci0, rssi: -40), .init(adapter: Self.hci1, rssi: -85, paired: true),
        ]
        _ = fleet.handle(.device(cuff, .deviceFound(adapter: Self.hci0), objects: objects), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci1)])
        _ = fleet.handle(.deviceOutput(.attemptFinished(cuff, adapter: Self.hci1, outcome: .cancelled)), now: Self.t0)

        // hci1 goes: the bond cannot be used, and a new one through hci0 beats never connecting.
        _ = fleet.handle(.adapterChanged(Self.hci1, powered: false), now: Self.t0)
        _ = fleet.handle(.adapterPowerChanged(Self.hci1, powered: false), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci0)])
    }

    @Test func aSleepingDevicesRequestDoesNotWaitForAnotherDevicesAttempt() {
        // A strap's attempt is in flight on hci0 (up to 45 s); the cuff, asleep, asks for its
        // pending Connect's place: it holds no LE Create Connection, so it is placed at once.
        let (strap, cuff) = (Self.strap, Self.watch)
        var fleet = Self.running(Self.configuration(pinned: [strap, cuff]))
        for id in [strap, cuff] {
            _ = fleet.handle(.device(id, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        }
        _ = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: strap) == [.attemptGranted(adapter: Self.hci0)])
        _ = fleet.handle(
            .deviceOutput(.lifecycle(cuff, .stateChanged(from: .idle, to: .asleep, session: 0, cause: nil))), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci0)])
        // Its grant comes back as standing; a link BlueZ reported meanwhile is not overwritten.
        _ = fleet.handle(.device(cuff, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.attemptFinished(cuff, adapter: Self.hci0, outcome: .standing)), now: Self.t0)
        if case .connected(Self.hci0, _)? = fleet.devices[cuff]?.link {} else {
            Issue.record("the link BlueZ reported is kept: \(String(describing: fleet.devices[cuff]?.link))")
        }
    }

    @Test func aSleepingDevicesRequestWaitsForAnAttemptBeingCalledOffOnItsAdapter() {
        // A pool strap's attempt is in flight on hci0; the pinned cuff, asleep, needs the slot:
        // the strap is evicted (its Disconnect goes out) and the cuff's pending Connect waits for
        // the cancelled Connect to come back — bluetoothd 5.66 given both at once lost the new
        // link's ATT channel on the real stack.
        let (cuff, strap) = (Self.strap, Self.watch)
        var configuration = Self.configuration(pinned: [cuff], pool: true)
        configuration.pool = PoolConfiguration(maxConnections: 4, defaultSlotsPerAdapter: 1)
        var fleet = Self.running(configuration)
        _ = fleet.handle(.device(strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: Self.t0)
        let strapGranted = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(strapGranted, to: strap).contains(.attemptGranted(adapter: Self.hci0)), "\(strapGranted)")
        _ = fleet.handle(.device(cuff, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        _ = fleet.handle(
            .deviceOutput(.lifecycle(cuff, .stateChanged(from: .idle, to: .asleep, session: 0, cause: nil))), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        let evicting = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(evicting, to: strap) == [.policyUpdated(wanted: false)], "the pool strap makes room")
        #expect(Self.deliveries(evicting, to: cuff).isEmpty, "no Connect while the strap's is being called off")
        // bluetoothd answers the cancelled Connect: now the cuff's goes out.
        _ = fleet.handle(.deviceOutput(.attemptFinished(strap, adapter: Self.hci0, outcome: .cancelled)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci0)])
    }

    /// hci0's 2 slots linked by the strap and the watch (a cuff here), all three pinned; a third
    /// pinned device, heard, asks for an attempt.
    static func bothSlotsLinkedAndAThirdWaiting() -> FleetStateMachine {
        let third = PoolFixture.device(3)
        var fleet = Self.running(Self.configuration(pinned: [strap, watch, third]))
        for id in [strap, watch] {
            _ = fleet.handle(.device(id, .connected, objects: [.init(adapter: hci0, connected: true)]), now: t0)
        }
        _ = fleet.handle(.device(third, .deviceFound(adapter: hci0), objects: [.init(adapter: hci0, rssi: -40)]), now: t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(third)), now: t0)
        return fleet
    }

    @Test func aPinnedDeviceWhoseLinkEndsKeepsItsPlaceAgainstAnotherWaiting() {
        // hci0 has 2 slots, both linked; a third pinned device waits. The cuff's session ends
        // (it hangs up to sleep): its slot stays its own, for its next pending Connect.
        let (cuff, third) = (Self.watch, PoolFixture.device(3))
        var fleet = Self.bothSlotsLinkedAndAThirdWaiting()
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: third).isEmpty, "both slots are held")
        _ = fleet.handle(.device(cuff, .disconnected(nil), objects: [.init(adapter: Self.hci0, rssi: -70)]), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: third).isEmpty, "the cuff's place is kept")
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        let next = fleet.handle(.evaluate, now: Self.t0)
        #expect(Self.deliveries(next, to: cuff) == [.attemptGranted(adapter: Self.hci0)])
        #expect(Self.deliveries(next, to: third).isEmpty)
    }

    @Test func aDeviceThatGaveUpKeepsNoPlace() {
        // The wrong-passkey cuff linked, failed its bonding and gave up: its slot goes to the
        // pinned device waiting, not kept for a device that waits for an operator.
        let (cuff, third) = (Self.watch, PoolFixture.device(3))
        var fleet = Self.bothSlotsLinkedAndAThirdWaiting()
        _ = fleet.handle(.evaluate, now: Self.t0)
        _ = fleet.handle(.device(cuff, .disconnected(nil), objects: [.init(adapter: Self.hci0, rssi: -70)]), now: Self.t0)
        _ = fleet.handle(
            .deviceOutput(.lifecycle(cuff, .stateChanged(from: .pairing, to: .suspended(.gaveUp(.pairing)), session: 1, cause: .pairing))),
            now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: third) == [.attemptGranted(adapter: Self.hci0)])
    }

    @Test func aPinnedDeviceHeardOnlyByAFullAdapterIsLookedForByTheOthers() {
        // hci0's 2 slots are linked; the cuff was heard only there. hci1 has room but has not
        // heard it: discovery looks for it, and once hci1 reports it, it is placed there.
        let cuff = PoolFixture.device(3)
        var fleet = Self.bothSlotsLinkedAndAThirdWaiting()
        _ = fleet.handle(.adapterChanged(Self.hci1, powered: true), now: Self.t0)
        _ = fleet.handle(.adapterPowerChanged(Self.hci1, powered: true), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff).isEmpty)
        #expect(fleet.lookingElsewhere == [cuff])
        let objects: [FleetStateMachine.DeviceObject] = [.init(adapter: Self.hci0, rssi: -40), .init(adapter: Self.hci1, rssi: -75)]
        _ = fleet.handle(.device(cuff, nil, objects: objects), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci1)])
        #expect(fleet.lookingElsewhere.isEmpty)
    }

    @Test func aBondedDeviceGoesElsewhereOnlyWhenTheAdaptersWithItsKeysAreFull() {
        // hci1 (its keys) is full of pinned links; hci0 has room: bonding again there beats
        // never connecting.
        let (cuff, first, second) = (Self.strap, Self.watch, PoolFixture.device(3))
        var fleet = Self.running(Self.configuration(pinned: [cuff, first, second]))
        _ = fleet.handle(.adapterChanged(Self.hci1, powered: true), now: Self.t0)
        _ = fleet.handle(.adapterPowerChanged(Self.hci1, powered: true), now: Self.t0)
        for id in [first, second] {
            _ = fleet.handle(.device(id, .connected, objects: [.init(adapter: Self.hci1, connected: true)]), now: Self.t0)
        }
        let objects: [FleetStateMachine.DeviceObject] = [
            .init(adapter: Self.hci0, rssi: -80), .init(adapter: Self.hci1, rssi: -50, paired: true),
        ]
        _ = fleet.handle(.device(cuff, .deviceFound(adapter: Self.hci1), objects: objects), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(cuff)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: cuff) == [.attemptGranted(adapter: Self.hci0)])
    }

    @Test func anAdapterOutsideTheSelectionIsRecordedButNeverUsed() {
        var configuration = Self.configuration()
        configuration.adapters = [Self.hci0]
        var fleet = Self.running(configuration)
        let changed = fleet.handle(.adapterChanged(Self.hci1, powered: true), now: Self.t0)
        #expect(changed.isEmpty, "no central, no evaluation for an adapter the fleet does not use")
        let powered = fleet.handle(.adapterPowerChanged(Self.hci1, powered: true), now: Self.t0)
        #expect(Self.deliveries(powered, to: Self.strap).isEmpty)
        #expect(fleet.adapters[Self.hci1]?.selected == false)
    }

    @Test func evaluationRequestsCoalesceUntilTheEvaluationRuns() {
        var fleet = Self.running(Self.configuration())
        let first = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        let second = fleet.handle(.deviceOutput(.withdrawAttemptRequest(Self.strap)), now: Self.t0)
        #expect(first.filter { $0 == .requestEvaluation }.count == 1)
        #expect(!second.contains(.requestEvaluation), "one evaluation is already asked for")
        _ = fleet.handle(.evaluate, now: Self.t0)
        let third = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        #expect(third.contains(.requestEvaluation))
    }

    // MARK: - Admission

    @Test func anUnknownDeviceJoinsThePoolOnlyWhenAdmitted() {
        var configuration = Self.configuration(pinned: [], pool: true)
        configuration.poolAdmission = PoolAdmission(
            namePrefixes: ["HRM"], minimumRSSI: -80, defaultClass: "strap",
            rules: [PoolRule(namePrefix: "HRM-Fast", priority: 40, className: "fast")])
        var fleet = Self.running(configuration)
        let watch = fleet.handle(
            .device(Self.watch, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, name: "Watch", rssi: -50)]), now: Self.t0)
        #expect(watch.isEmpty, "a name outside the prefixes is not admitted, and nothing is kept")
        #expect(fleet.devices[Self.watch] == nil)
        let far = fleet.handle(
            .device(Self.band, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, name: "HRM-Fast 1", rssi: -90)]), now: Self.t0)
        #expect(far.isEmpty, "below the RSSI floor")
        let near = fleet.handle(
            .device(Self.band, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, name: "HRM-Fast 1", rssi: -60)]), now: Self.t0)
        #expect(Self.created(near) == [Self.band])
        #expect(fleet.devices[Self.band]?.priority == 40)
        #expect(fleet.devices[Self.band]?.className == "fast")
        #expect(fleet.devices[Self.band]?.name == "HRM-Fast 1")
        // Introduced to what the fleet knows, then told the fact that made it join.
        #expect(Self.deliveries(near, to: Self.band) == [.bluetoothdAppeared, .adapterPowered(Self.hci0), .deviceFound(adapter: Self.hci0)])
    }

    @Test func anRSSIChangeAloneNeverAdmitsADevice() {
        var fleet = Self.running(Self.configuration(pinned: [], pool: true))
        let update = fleet.handle(.device(Self.watch, nil, objects: [.init(adapter: Self.hci0, name: "Watch", rssi: -40)]), now: Self.t0)
        #expect(update.isEmpty)
        #expect(fleet.devices[Self.watch] == nil)
    }

    @Test func thePoolServiceFilterAloneDecidesWithoutAdmissionRules() {
        var configuration = Self.configuration(pinned: [], pool: true)
        configuration.poolServiceFilter = ["0000180d-0000-1000-8000-00805f9b34fb"]
        var fleet = Self.running(configuration)
        _ = fleet.handle(.device(Self.watch, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, services: ["0000180f-0000-1000-8000-00805f9b34fb"])]), now: Self.t0)
        #expect(fleet.devices[Self.watch] == nil)
        _ = fleet.handle(.device(Self.band, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, services: ["0000180d-0000-1000-8000-00805f9b34fb"])]), now: Self.t0)
        #expect(fleet.devices[Self.band]?.className == "pool")
    }

    // MARK: - Links

    @Test func theLinkIsWrittenByGrantsFinishedAttemptsAndBlueZFacts() {
        var fleet = Self.running(Self.configuration())
        _ = fleet.handle(.device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.devices[Self.strap]?.link == .attempting(Self.hci0))
        let later = Self.t0 + .seconds(1)
        _ = fleet.handle(.deviceOutput(.attemptFinished(Self.strap, adapter: Self.hci0, outcome: .connected)), now: later)
        #expect(fleet.devices[Self.strap]?.link == .connected(Self.hci0, since: later))
        #expect(fleet.devices[Self.strap]?.linksMade == 1)
        let lost = fleet.handle(.device(Self.strap, .disconnected(nil), objects: [.init(adapter: Self.hci0)]), now: later)
        #expect(fleet.devices[Self.strap]?.link == .disconnected)
        #expect(lost.contains(.dropNotifySockets(Self.strap)))
        #expect(Self.deliveries(lost, to: Self.strap) == [.disconnected(nil)])
    }

    @Test func aLinkThatSurvivedARestartIsAdoptedOnTheAdapterItLivesOn() {
        var fleet = Self.running(Self.configuration())
        let objects: [FleetStateMachine.DeviceObject] = [.init(adapter: Self.hci0), .init(adapter: Self.hci1, connected: true)]
        _ = fleet.handle(.device(Self.strap, .connected, objects: objects), now: Self.t0)
        #expect(fleet.devices[Self.strap]?.link.adapter == Self.hci1)
        #expect(fleet.devices[Self.strap]?.lastAdapter == Self.hci1)
    }

    @Test func aStateChangeOpensAndClosesTheWriteLane() {
        var fleet = Self.running(Self.configuration())
        let ready = fleet.handle(.deviceOutput(.lifecycle(Self.strap, .stateChanged(from: .discovering, to: .ready, session: 1, cause: nil))), now: Self.t0)
        #expect(ready.contains(.configureWrites(Self.strap, OutgoingDeviceOptions())))
        #expect(ready.contains(.openWriteLane(Self.strap, useSocket: false)))
        #expect(fleet.devices[Self.strap]?.state == .ready)
        let again = fleet.handle(.deviceOutput(.lifecycle(Self.strap, .stateChanged(from: .ready, to: .degraded(.writesFailing), session: 1, cause: nil))), now: Self.t0)
        #expect(!again.contains { if case .configureWrites = $0 { true } else { false } }, "the write path learns its options once")
        let lost = fleet.handle(.deviceOutput(.lifecycle(Self.strap, .stateChanged(from: .degraded(.writesFailing), to: .idle, session: 1, cause: nil))), now: Self.t0)
        #expect(lost.contains(.closeWriteLane(Self.strap)))
    }

    // MARK: - Reload

    @Test func aReloadIsAppliedWholeAndReportsWhatChanged() {
        var fleet = Self.running(Self.configuration(pinned: [Self.strap, Self.watch], pool: true))
        var next = Self.configuration(pinned: [Self.watch, Self.band], pool: true)
        next.reconnect = ReconnectPolicy(baseDelay: .seconds(3))
        let bandObject = FleetStateMachine.DeviceObject(adapter: Self.hci0, name: "Band", rssi: -55, connected: true)
        let actions = fleet.handle(.reload(next, objects: [Self.band: [bandObject]]), now: Self.t0)
        guard case .reply(.reloaded(let summary))? = actions.last(where: { if case .reply = $0 { true } else { false } }) else {
            Issue.record("a reload answers with its summary")
            return
        }
        #expect(summary.pinnedAdded == [Self.band])
        #expect(summary.pinnedRemoved == [Self.strap])
        #expect(Set(summary.reconfigured) == [Self.strap, Self.watch], "the reconnect policy changed for the devices it already had")
        #expect(fleet.configuration == next)
        // The new pin is introduced to what the fleet knows, its live link adopted.
        #expect(Self.deliveries(actions, to: Self.band) == [
            .bluetoothdAppeared, .adapterPowered(Self.hci0), .deviceFound(adapter: Self.hci0), .policyUpdated(wanted: true), .connected,
        ])
        #expect(fleet.devices[Self.band]?.link.adapter == Self.hci0)
        // The unpinned strap stays as a pool candidate (the pool is on), in the pool's class.
        #expect(fleet.devices[Self.strap]?.pinned == false)
        #expect(fleet.devices[Self.strap]?.className == "pool")
        #expect(actions.contains(.publish(.reloaded(summary))))
    }

    @Test func unpinningWithThePoolOffForgetsTheDeviceAndReleasesItsLink() {
        var fleet = Self.running(Self.configuration(pinned: [Self.strap, Self.watch]))
        _ = fleet.handle(.device(Self.strap, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        let actions = fleet.handle(.reload(Self.configuration(pinned: [Self.watch]), objects: [:]), now: Self.t0)
        #expect(fleet.devices[Self.strap] == nil)
        #expect(actions.contains(.deliver(Self.strap, .policyUpdated(wanted: false))))
        #expect(actions.contains(.retireDevice(Self.strap, disconnect: true)))
        #expect(actions.contains(.publish(.deviceRemoved(Self.strap, reason: .unpinnedByConfiguration))))
    }

    @Test func aPoolDeviceThatBecomesPinnedKeepsItsMachineAndLink() {
        var fleet = Self.running(Self.configuration(pinned: [], pool: true))
        _ = fleet.handle(.device(Self.watch, .connected, objects: [.init(adapter: Self.hci0, name: "W", connected: true)]), now: Self.t0)
        let actions = fleet.handle(.reload(Self.configuration(pinned: [Self.watch], pool: true), objects: [:]), now: Self.t0)
        #expect(Self.created(actions).isEmpty)
        #expect(fleet.devices[Self.watch]?.pinned == true)
        #expect(fleet.devices[Self.watch]?.link.adapter == Self.hci0)
        #expect(Self.deliveries(actions, to: Self.watch).first == .policyUpdated(wanted: true))
    }

    /// Every outlet hears of a device's new role however it came: a reload that unpins it with
    /// the pool on, a command that holds it or lets it go.
    @Test func aRoleOrHoldThatChangesIsPublishedAsTheDeviceNowIs() {
        var fleet = Self.running(Self.configuration(pinned: [Self.strap, Self.watch], pool: true))
        let reload = fleet.handle(.reload(Self.configuration(pinned: [Self.strap], pool: true), objects: [:]), now: Self.t0)
        #expect(reload.contains(.publish(.deviceUpdated(FleetObservedDevice(id: Self.watch, name: nil, className: "pool", pinned: false)))))
        #expect(!reload.contains { if case .publish(.deviceUpdated(let device)) = $0 { device.id == Self.strap } else { false } })
        let hold = fleet.handle(.command(.disconnect(Self.strap)), now: Self.t0)
        #expect(hold.contains(.publish(.deviceUpdated(FleetObservedDevice(id: Self.strap, name: nil, className: "strap", pinned: true, held: true)))))
        let release = fleet.handle(.command(.reconnect(Self.strap)), now: Self.t0)
        #expect(release.contains(.publish(.deviceUpdated(FleetObservedDevice(id: Self.strap, name: nil, className: "strap", pinned: true)))))
        // Nothing changed, nothing published; a refused command changes nothing either.
        let again = fleet.handle(.command(.reconnect(Self.strap)), now: Self.t0)
        #expect(!again.contains { if case .publish(.deviceUpdated) = $0 { true } else { false } })
        #expect(DeviceState.names == [DeviceState.idle, .asleep, .resolving, .connecting(adapter: nil), .discovering, .pairing, .ready,
            .degraded(.writesFailing), .backingOff(attempt: 1, deadline: Self.t0), .suspended(.noPoweredAdapter)].map(\.name))
    }

    @Test func aReloadThatChangesNothingTouchesNoDevice() {
        let configuration = Self.configuration(pinned: [Self.strap, Self.watch])
        var fleet = Self.running(configuration)
        let actions = fleet.handle(.reload(configuration, objects: [:]), now: Self.t0)
        #expect(actions.allSatisfy {
            switch $0 {
            case .publish(.reloaded), .reply, .requestEvaluation: true
            default: false
            }
        })
    }

    @Test func deselectingAnAdapterTreatsItAsPoweredOffStopsItsDiscoveryAndReselectingTakesItUp() {
        var fleet = Self.running(Self.configuration())
        // The strap is missing: hci0 discovers for it.
        _ = FleetStateMachineDiscoveryTests.settle(&fleet, after: .deviceOutput(.resolving(Self.strap, true)))
        #expect(fleet.adapters[Self.hci0]?.discovery.running == true)
        var onlyHci1 = Self.configuration()
        onlyHci1.adapters = [Self.hci1]
        let deselect = fleet.handle(.reload(onlyHci1, objects: [:]), now: Self.t0)
        #expect(Self.deliveries(deselect, to: Self.strap) == [.adapterUnpowered(Self.hci0)])
        #expect(fleet.adapters[Self.hci0]?.selected == false)
        #expect(FleetStateMachineDiscoveryTests.calls(deselect) == [.init(Self.hci0, .stop)], "an adapter the fleet no longer uses stops discovering")
        let reselect = fleet.handle(.reload(Self.configuration(), objects: [:]), now: Self.t0)
        #expect(reselect.contains(.createCentral(Self.hci0)))
        #expect(Self.deliveries(reselect, to: Self.strap) == [.adapterPowered(Self.hci0)])
    }

    @Test func writesToAnUnknownDeviceAreRefusedAndChangeNothing() {
        var fleet = Self.running(Self.configuration())
        let before = fleet.devices
        #expect(fleet.handle(.command(.prepareWrite(Self.band)), now: Self.t0) == [.reply(.refused(.unknownDevice(Self.band)))])
        #expect(fleet.devices == before)
    }

    // MARK: - Commands

    @Test func aHeldDeviceIsGrantedNoAttemptUntilReconnect() {
        var fleet = Self.running(Self.configuration())
        _ = fleet.handle(.device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -60)]), now: Self.t0)
        let disconnect = fleet.handle(.command(.disconnect(Self.strap)), now: Self.t0)
        #expect(disconnect.contains(.reply(.done)))
        #expect(Self.deliveries(disconnect, to: Self.strap) == [.policyUpdated(wanted: false)])
        // Even if its machine asked for one before it heard, no grant while held.
        _ = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: Self.strap).isEmpty)
        let reconnect = fleet.handle(.command(.reconnect(Self.strap)), now: Self.t0)
        #expect(Self.deliveries(reconnect, to: Self.strap) == [.policyUpdated(wanted: true), .reconnectRequested])
        #expect(Self.deliveries(fleet.handle(.evaluate, now: Self.t0), to: Self.strap) == [.attemptGranted(adapter: Self.hci0)])
    }

    @Test func runtimePinsSavedByAPreviousRunArePinnedAtStartAndTheFilesPinWins() {
        var fleet = FleetStateMachine(configuration: Self.configuration(), now: Self.t0, seed: 1)
        let saved = [
            FleetRuntimeConfiguration.PinnedDevice(id: Self.watch, name: "watch", className: "strap", priority: 2),
            // The file pins the strap too (since the pin was made): the file's pin decides.
            FleetRuntimeConfiguration.PinnedDevice(id: Self.strap, name: "runtime name", className: "strap", priority: 9),
        ]
        #expect(fleet.handle(.restoreRuntimePins(saved), now: Self.t0).isEmpty)
        #expect(Self.created(fleet.handle(.start, now: Self.t0)).sorted() == [Self.strap, Self.watch].sorted())
        #expect(fleet.devices[Self.watch]?.pinned == true && fleet.devices[Self.watch]?.name == "watch")
        #expect(fleet.devices[Self.strap]?.name == nil && fleet.devices[Self.strap]?.priority == 0)
        #expect(fleet.runtimePins.keys.sorted() == [Self.strap, Self.watch].sorted())
        // The restored run-time pin can be undone; the file's cannot, whatever the run-time pins say.
        #expect(fleet.handle(.command(.unpin(Self.watch)), now: Self.t0).contains(.reply(.done)))
        #expect(fleet.handle(.command(.unpin(Self.strap)), now: Self.t0) == [.reply(.refused(.pinnedByConfiguration(Self.strap, definedAt: nil)))])
    }

    @Test func aRefusalOfTheFilesPinNamesWhereTheFilePinsIt() {
        var configuration = Self.configuration()
        configuration.pinned[0].definedAt = "/etc/wearfleet/wearfleetd.d/50-ward.toml:7"
        var fleet = Self.running(configuration)
        let refused = fleet.handle(.command(.unpin(Self.strap)), now: Self.t0)
        #expect(refused == [.reply(.refused(.pinnedByConfiguration(Self.strap, definedAt: "/etc/wearfleet/wearfleetd.d/50-ward.toml:7")))])
        #expect(FleetCommandError.pinnedByConfiguration(Self.strap, definedAt: "/etc/wearfleet/wearfleetd.d/50-ward.toml:7").description
            .contains("pinned by the configuration file at /etc/wearfleet/wearfleetd.d/50-ward.toml:7; unpin it there and reload"))
    }

    @Test func pinOptionsOutOfBoundsAndPinsBeyondTheLimitAreRefusedAndChangeNothing() {
        var fleet = Self.running(Self.configuration())
        let long = String(repeating: "n", count: 249)
        #expect(fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap", name: long), objects: [])), now: Self.t0)
            == [.reply(.refused(.invalidPinOptions("a name has at most 248 bytes (a GAP device name)")))])
        #expect(fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap", priority: 1001), objects: [])), now: Self.t0)
            == [.reply(.refused(.invalidPinOptions("a priority is an integer from 0 to 1000")))])
        #expect(fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap", priority: -1), objects: [])), now: Self.t0)
            == [.reply(.refused(.invalidPinOptions("a priority is an integer from 0 to 1000")))])
        #expect(fleet.runtimePins.isEmpty && fleet.devices[Self.watch] == nil)
        for index in 0..<FleetStateMachine.runtimePinLimit {
            guard let address = BluetoothAddress(bytes: [0xD0, 0, 0, 0, UInt8(index >> 8), UInt8(index & 0xFF)]) else { return }
            _ = fleet.handle(.command(.pin(DeviceID(address: address), FleetPinOptions(className: "strap"), objects: [])), now: Self.t0)
        }
        #expect(fleet.runtimePins.count == FleetStateMachine.runtimePinLimit)
        #expect(fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap"), objects: [])), now: Self.t0)
            == [.reply(.refused(.tooManyRuntimePins(limit: FleetStateMachine.runtimePinLimit)))])
        #expect(fleet.devices[Self.watch] == nil)
    }

    @Test func aReloadThatRemovesARuntimePinsClassSaysSo() {
        var fleet = Self.running(Self.configuration())
        #expect(fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap"), objects: [])), now: Self.t0).contains(.reply(.done)))
        var withoutStrap = Self.configuration(pinned: [])
        withoutStrap.classes["strap"] = nil
        let reload = fleet.handle(.reload(withoutStrap, objects: [:]), now: Self.t0)
        guard case .reply(.reloaded(let summary))? = reload.last(where: { if case .reply = $0 { true } else { false } }) else {
            Issue.record("a reload answers with its summary")
            return
        }
        #expect(summary.runtimePinsWithoutClass == [Self.watch: "strap"])
        #expect(summary.description.contains("1 run-time pins lost their class"))
        #expect(fleet.devices[Self.watch]?.pinned == true, "still pinned")
        // A reload that keeps the class says nothing of it.
        var again = Self.running(Self.configuration())
        _ = again.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap"), objects: [])), now: Self.t0)
        let quiet = again.handle(.reload(Self.configuration(), objects: [:]), now: Self.t0)
        #expect(quiet.contains { if case .reply(.reloaded(let summary)) = $0 { summary.runtimePinsWithoutClass.isEmpty } else { false } })
    }

    @Test func aRuntimePinSurvivesAReloadThatDoesNotMentionIt() {
        var fleet = Self.running(Self.configuration())
        let pin = fleet.handle(.command(.pin(Self.watch, FleetPinOptions(className: "strap", priority: 3), objects: [])), now: Self.t0)
        #expect(pin.contains(.reply(.done)))
        #expect(Self.created(pin) == [Self.watch])
        #expect(pin.contains { if case .publish(.runtimePinsChanged(let pins)) = $0 { pins.map(\.id) == [Self.watch] } else { false } })
        let reload = fleet.handle(.reload(Self.configuration(), objects: [:]), now: Self.t0)
        guard case .reply(.reloaded(let summary))? = reload.last(where: { if case .reply = $0 { true } else { false } }) else {
            Issue.record("a reload answers with its summary")
            return
        }
        #expect(summary.pinnedRemoved.isEmpty)
        #expect(fleet.devices[Self.watch]?.pinned == true)
        // Unpinned by command, with the pool off, it is forgotten.
        let unpin = fleet.handle(.command(.unpin(Self.watch)), now: Self.t0)
        #expect(unpin.contains(.retireDevice(Self.watch, disconnect: false)))
        #expect(unpin.contains(.publish(.deviceRemoved(Self.watch, reason: .unpinned))), "the operator's doing: forgotten")
        #expect(fleet.devices[Self.watch] == nil)
        #expect(fleet.handle(.command(.unpin(Self.watch)), now: Self.t0) == [.reply(.refused(.unknownDevice(Self.watch)))])
    }

    @Test func refusedCommandsChangeNothing() {
        var fleet = Self.running(Self.configuration(pinned: [Self.strap]))
        let before = fleet.devices
        let refusals: [(FleetCommand, FleetCommandError)] = [
            (.pin(Self.watch, FleetPinOptions(className: "nonesuch"), objects: []), .unknownClass("nonesuch")),
            (.pin(Self.strap, FleetPinOptions(className: "strap"), objects: []), .pinnedByConfiguration(Self.strap, definedAt: nil)),
            (.unpin(Self.strap), .pinnedByConfiguration(Self.strap, definedAt: nil)),
            (.disconnect(Self.watch), .unknownDevice(Self.watch)),
            (.reconnect(Self.watch), .unknownDevice(Self.watch)),
            (.prepareRead(Self.strap), .notConnected(Self.strap)),
            (.unsubscribe(Self.strap, characteristic: "x"), .notSubscribed(Self.strap, "x")),
        ]
        for (command, error) in refusals {
            #expect(fleet.handle(.command(command), now: Self.t0) == [.reply(.refused(error))], "\(command)")
        }
        #expect(fleet.devices == before)
    }

    @Test func aSubscriptionAddedByCommandOutlivesAReloadOfItsClass() {
        var fleet = Self.running(Self.configuration())
        let subscribe = fleet.handle(.command(.subscribe(Self.strap, characteristic: "t")), now: Self.t0)
        #expect(Self.deliveries(subscribe, to: Self.strap) == [.subscriptionAdded(characteristic: "t")])
        var next = Self.configuration()
        next.classes["strap"]?.subscriptions = ["hr"]
        let reload = fleet.handle(.reload(next, objects: [:]), now: Self.t0)
        let reconfigured = reload.compactMap { action -> DeviceStateMachine.Configuration? in
            if case .reconfigureDevice(Self.strap, let configuration, _) = action { configuration } else { nil }
        }
        #expect(reconfigured.map(\.subscriptions) == [["hr", "t"]])
        #expect(fleet.handle(.command(.subscribe(Self.strap, characteristic: "t")), now: Self.t0) == [.reply(.refused(.alreadySubscribed(Self.strap, "t")))])
    }

    /// A device heard with a pinned device's address but the other address type: the pin will
    /// never match it, which nothing else would say. Told once per pin, with the pin's place.
    @Test func aPinnedAddressHeardWithTheOtherAddressTypeIsToldOnce() {
        var configuration = Self.configuration(pinned: [])
        configuration.pinned = [FleetRuntimeConfiguration.PinnedDevice(id: Self.strap, className: "strap", definedAt: "/etc/wearfleet/wearfleetd.toml:12")]
        var fleet = Self.running(configuration)
        let random = DeviceID(address: Self.strap.address, addressType: .random)
        let object = FleetStateMachine.DeviceObject(adapter: Self.hci0, name: "Cuff", rssi: -60)
        let heard = fleet.handle(.device(random, .deviceFound(adapter: Self.hci0), objects: [object]), now: Self.t0)
        #expect(heard.contains(.publish(.addressTypeMismatch(pinned: Self.strap, heard: random, definedAt: "/etc/wearfleet/wearfleetd.toml:12"))))
        #expect(fleet.devices[random] == nil, "the pool is off: nothing else happens")
        let again = fleet.handle(.device(random, .deviceFound(adapter: Self.hci0), objects: [object]), now: Self.t0)
        #expect(!again.contains { if case .publish(.addressTypeMismatch) = $0 { true } else { false } }, "once")
        // Another address, or the pin's own type, says nothing.
        let other = DeviceID(address: PoolFixture.device(9).address, addressType: .random)
        let unrelated = fleet.handle(.device(other, .deviceFound(adapter: Self.hci0), objects: [object]), now: Self.t0)
        #expect(!unrelated.contains { if case .publish(.addressTypeMismatch) = $0 { true } else { false } })
        // A pin heard with its own type too: both devices exist, nothing is wrong with the pin.
        var heardToo = Self.running(configuration)
        _ = heardToo.handle(.device(Self.strap, .deviceFound(adapter: Self.hci0), objects: [object]), now: Self.t0)
        let both = heardToo.handle(.device(random, .deviceFound(adapter: Self.hci0), objects: [object]), now: Self.t0)
        #expect(!both.contains { if case .publish(.addressTypeMismatch) = $0 { true } else { false } })
    }
}
