// What BlueZ reports of each device and what each device's machine reports back: the facts
// that move a device's link, objects and state in the fleet's records.

extension FleetStateMachine {
    // MARK: - Device facts

    mutating func deviceFact(
        _ id: DeviceID, _ event: DeviceEvent?, objects: [DeviceObject], now: MonotonicInstant, _ actions: inout [Action]
    ) {
        if devices[id] == nil {
            if event != nil { tellAddressTypeMismatch(heard: id, &actions) }
            guard event != nil, considerPoolCandidate(id, objects: objects, &actions) else { return }
        }
        if event == .deviceLost, !objectLossMatters(id, remaining: objects) {
            // Another adapter's duplicate went (TemporaryTimeout): the device is still reachable
            // through the objects left, and its link, if any, is untouched.
            noteObjects(id, objects)
            requestEvaluation(&actions)
            return
        }
        noteObjects(id, objects)
        guard let event else { return }
        var explainedAtOnce: (adapter: AdapterID, cause: FleetEvent.LinkLossCause)?
        switch event {
        case .connected:
            // A link is newer than any loss or failed attempt before it.
            devices[id]?.unexplainedLinkLoss = nil
            devices[id]?.unexplainedAttemptFailures = []
            devices[id]?.leftBehindClosedAt = nil
            if case .connected = devices[id]?.link { break }
            let adapter = devices[id]?.link.adapter ?? objects.first(where: \.connected)?.adapter
            if let adapter {
                // A link nobody attempted (BlueZ reconnected on its own) is adopted on the
                // adapter it lives on: the machine learns that adapter first, whichever of the
                // device's objects it heard of last.
                if devices[id]?.link == .disconnected { actions.append(.deliver(id, .deviceFound(adapter: adapter))) }
                devices[id]?.link = .connected(adapter, since: now)
                devices[id]?.lastAdapter = adapter
            }
        case .disconnected, .deviceLost:
            if case .disconnected(nil) = event, let left = bluetoothdLeftLinksAt, linksLeftBehind.contains(id),
                now.duration(since: left) <= Self.leftBehindLinkWindow, let adapter = devices[id]?.link.adapter
            {
                linksLeftBehind.remove(id)
                // A link the killed bluetoothd left behind, which the kernel closed; the new
                // bluetoothd reported it connected first (measured: NOTES.md, the real stack). Its
                // `Connected` false can come before the fleet hears the attempt that adopted it
                // ended, so an attempt's link counts too.
                actions.append(.publish(.linkLossExplained(id, adapter: adapter, cause: .bluetoothdLeftLinksBehind, ago: .zero)))
                explainedAtOnce = (adapter, .bluetoothdLeftLinksBehind)
                devices[id]?.leftBehindClosedAt = now
            } else if case .disconnected(nil) = event, case .connected(let adapter, _)? = devices[id]?.link {
                if adapters[adapter]?.powered == false {
                    // Its adapter was already powering off (BlueZ's `PowerState` said so first).
                    actions.append(.publish(.linkLossExplained(id, adapter: adapter, cause: .adapterPoweredOff, ago: .zero)))
                    explainedAtOnce = (adapter, .adapterPoweredOff)
                } else {
                    devices[id]?.unexplainedLinkLoss = UnexplainedLoss(adapter: adapter, at: now)
                }
            }
            devices[id]?.link = .disconnected
            actions.append(.dropNotifySockets(id))
        default:
            break
        }
        actions.append(.deliver(id, event))
        if let (adapter, cause) = explainedAtOnce {
            // After the loss itself: a machine that recorded a failure for it takes it back (one
            // that heard its adapter go first recorded none, and ignores this).
            actions.append(.deliver(id, .linkLossExplained(adapter: adapter, cause: cause)))
        }
        if event == .deviceLost { forgetPoolCandidateThatLeft(id, &actions) }
        requestEvaluation(&actions)
    }

    /// A device the fleet does not have, with the address of a pinned device bluetoothd has no
    /// object for, and the other address type: the pin's `address_type` is likely wrong (nothing
    /// else will ever say so — the pin just never matches). Said once per pin and run.
    private mutating func tellAddressTypeMismatch(heard: DeviceID, _ actions: inout [Action]) {
        let other = DeviceID(address: heard.address, addressType: heard.addressType == .public ? .random : .public)
        guard let device = devices[other], device.pinned, device.objects.isEmpty,
            case let pinned = other, addressTypeMismatchesTold.insert(pinned).inserted
        else { return }
        let definedAt = configuration.pinned.first { $0.id == pinned }?.definedAt
        actions.append(.publish(.addressTypeMismatch(pinned: pinned, heard: heard, definedAt: definedAt)))
    }

    /// Whether losing one of the device's objects is news for its machine. BlueZ keeps one
    /// object per adapter that heard the device, and an unbonded device's object on an adapter
    /// expires on its own timer: only the loss of the object the link or attempt goes through,
    /// or of the last one, changes what the device can do.
    func objectLossMatters(_ id: DeviceID, remaining: [DeviceObject]) -> Bool {
        guard !remaining.isEmpty else { return true }
        guard let adapter = devices[id]?.link.adapter else { return false }
        return !remaining.contains { $0.adapter == adapter }
    }

    /// A pool device whose last BlueZ object went (it left, or bluetoothd forgot it) while it
    /// had no link and no attempt is forgotten, with its machine and its metric series; if it
    /// comes back, discovery finds it and the pool admits it again. Pinned devices stay.
    private mutating func forgetPoolCandidateThatLeft(_ id: DeviceID, _ actions: inout [Action]) {
        guard let device = devices[id], !device.pinned, device.objects.isEmpty, device.link == .disconnected else { return }
        forget(id, because: .left, &actions)
    }

    /// Keeps the device's objects as BlueZ has them now, with the RSSI they report; a device
    /// pinned without a name takes the name it advertises.
    mutating func noteObjects(_ id: DeviceID, _ objects: [DeviceObject]) {
        guard var device = devices[id] else { return }
        var seen: Set<AdapterID> = []
        device.objects = objects.filter { seen.insert($0.adapter).inserted }.sorted { $0.adapter < $1.adapter }.map {
            DeviceObject(adapter: $0.adapter, rssi: $0.rssi, connected: $0.connected, paired: $0.paired)
        }
        for object in objects {
            if let rssi = object.rssi { device.lastRSSI[object.adapter] = rssi }
            if device.name == nil, let advertised = object.name { device.name = advertised }
            // What a pool device advertises or resolved ranks it again at a reload.
            if !device.pinned {
                for service in object.services where !device.poolServices.contains(service) { device.poolServices.append(service) }
            }
        }
        devices[id] = device
    }

    // MARK: - Device outputs

    mutating func deviceOutput(_ output: DeviceOutput, now: MonotonicInstant, _ actions: inout [Action]) {
        switch output {
        case .requestAttempt(let id):
            if case .connected(let adapter, _)? = devices[id]?.link {
                // BlueZ reports a link the machine no longer counts on (a teardown's `Disconnect`
                // that did not take, or that has not yet): no grant would ever come while it is up,
                // so the machine is told of it and adopts it. If the link does go, its loss follows.
                actions.append(.deliver(id, .deviceFound(adapter: adapter)))
                actions.append(.deliver(id, .connected))
                break
            }
            devices[id]?.wantsAttempt = true
            requestEvaluation(&actions)
        case .withdrawAttemptRequest(let id):
            devices[id]?.wantsAttempt = false
            requestEvaluation(&actions)
        case .attemptFinished(let id, let adapter, let outcome):
            policy.attemptFinished(device: id)
            switch outcome {
            case .connected:
                devices[id]?.link = .connected(adapter, since: now)
                devices[id]?.lastAdapter = adapter
                devices[id]?.recentFailures = 0
                devices[id]?.unexplainedAttemptFailures = []
                devices[id]?.linksMade += 1
            case .failed:
                devices[id]?.link = .disconnected
                if let cause = knownCauseOfLosses(on: adapter) {
                    // The adapter (or bluetoothd) was already gone when the attempt's end reached
                    // the fleet: its end was theirs (a device machine that heard of it first
                    // recorded no failure, and one that did not takes its failure back).
                    actions.append(.deliver(id, .linkLossExplained(adapter: adapter, cause: cause)))
                } else if let closed = devices[id]?.leftBehindClosedAt, now.duration(since: closed) <= Self.leftBehindAttemptWindow {
                    // The kernel was still tearing down the link the killed bluetoothd left
                    // behind (real stack, stressed: `Operation already in progress` 50 ms after
                    // the loss): the restart's doing, taken back like the loss itself.
                    devices[id]?.leftBehindClosedAt = nil
                    actions.append(.publish(.linkLossExplained(id, adapter: adapter, cause: .bluetoothdLeftLinksBehind, ago: .zero)))
                    actions.append(.deliver(id, .linkLossExplained(adapter: adapter, cause: .bluetoothdLeftLinksBehind)))
                } else {
                    devices[id]?.recentFailures += 1
                    var failures = devices[id]?.unexplainedAttemptFailures ?? []
                    failures.append(UnexplainedLoss(adapter: adapter, at: now))
                    failures.removeFirst(max(0, failures.count - DeviceStateMachine.longestExplainableChain))
                    devices[id]?.unexplainedAttemptFailures = failures
                }
            // Neither overwrites a link BlueZ reported up meanwhile (a late grant's answer, a
            // pending Connect that completed before its grant's return was handled).
            case .cancelled:
                if case .connected? = devices[id]?.link { break }
                devices[id]?.link = .disconnected
            case .standing:
                if case .connected? = devices[id]?.link { break }
                devices[id]?.link = .standing(adapter)
                devices[id]?.lastAdapter = adapter
            }
            requestEvaluation(&actions)
        case .standingEnded(let id, let adapter):
            if case .standing(adapter)? = devices[id]?.link { devices[id]?.link = .disconnected }
            requestEvaluation(&actions)
        case .persist(let id, let update):
            guard let device = devices[id] else { break }
            let context = PersistContext(pinned: device.pinned, name: device.name, adapter: device.link.adapter ?? device.lastAdapter)
            actions.append(.publish(.learned(id, update, context)))
        case .lifecycle(let id, let event):
            guard let device = devices[id] else { break }
            actions.append(.publish(.lifecycle(id, event, context: device.context, at: now)))
            switch event {
            case .failed(let failureClass, _, _):
                var before = device.failuresBeforeLast
                before.append(device.lastFailure)
                if before.count > DeviceStateMachine.longestExplainableChain { before.removeFirst() }
                devices[id]?.failuresBeforeLast = before
                devices[id]?.lastFailure = failureClass
            case .failureWithdrawn:
                // The machine takes back only its latest failures, newest first, so the one
                // before each is what the device's last failure is again.
                var before = device.failuresBeforeLast
                if let previous = before.popLast() {
                    devices[id]?.lastFailure = previous
                    devices[id]?.failuresBeforeLast = before
                }
            case .stateChanged(let from, let to, _, _):
                devices[id]?.state = to
                // What the pool policy reads of the state changed: a device that rests keeps no
                // place, one asleep waits for no attempt (the request may already be there).
                if from.isResting != to.isResting || (from == .asleep) != (to == .asleep) { requestEvaluation(&actions) }
                // Ready means services resolved: a link made anew, not one a killed bluetoothd left
                // (bluetoothd has no GATT client on those); its next loss is its own.
                if to == .ready { linksLeftBehind.remove(id) }
                followWritability(id, from: from, to: to, &actions)
                if from == .pairing, to != .pairing, let adapter = device.link.adapter ?? device.lastAdapter {
                    restartDiscoveryAfterPairing(on: adapter)
                }
            case .setupProblem:
                break
            }
        case .resolving(let id, let looking):
            resolvingChanged(id, looking)
        case .resumeWrites(let id):
            guard let device = devices[id], device.state.acceptsWrites else { break }
            let useSocket = configuration.deviceConfiguration(className: device.className).useFileDescriptorPath
            actions.append(.openWriteLane(id, useSocket: useSocket))
        case .writeOutcome(let id, let event):
            guard devices[id] != nil else { break }
            actions.append(.deliver(id, event))
            switch event {
            case .writeCompleted: actions.append(.publish(.writeFinished(id, failure: nil)))
            case .writeFailed(let failure): actions.append(.publish(.writeFinished(id, failure: failure)))
            default: break
            }
        case .value:
            // Values go to the data path, not through the fleet's decisions.
            break
        }
    }

    // MARK: - Writes

    /// Opens the device's write lane when it becomes usable and closes it when it stops being so
    /// (its queued writes wait for the next link).
    mutating func followWritability(_ id: DeviceID, from: DeviceState, to: DeviceState, _ actions: inout [Action]) {
        if to.acceptsWrites, !from.acceptsWrites, let device = devices[id] {
            _ = configureWritesIfNeeded(id, &actions)
            let useSocket = configuration.deviceConfiguration(className: device.className).useFileDescriptorPath
            actions.append(.openWriteLane(id, useSocket: useSocket))
        } else if from.acceptsWrites, !to.acceptsWrites {
            actions.append(.closeWriteLane(id))
        }
    }

    /// The device's class write settings; the write path learns its options the first time.
    mutating func configureWritesIfNeeded(_ id: DeviceID, _ actions: inout [Action]) -> FleetRuntimeConfiguration.WriteSettings {
        let settings = configuration.writeSettings(className: devices[id]?.className)
        if devices[id]?.writesConfigured == false {
            devices[id]?.writesConfigured = true
            actions.append(.configureWrites(id, settings.options))
        }
        return settings
    }
}
