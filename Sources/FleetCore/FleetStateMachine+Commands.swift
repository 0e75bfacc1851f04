// The decision part of each `FleetCommand`: validated against the fleet's records first, so a
// refused command changes nothing.

extension FleetStateMachine {
    /// The class a pin without one gets (the configuration always defines it).
    public static let defaultClassName = "default"

    /// The most run-time pins there may be: anyone allowed to pin (an administrator, or the
    /// broker when `allow_commands` has `pin`) could otherwise grow the fleet and
    /// `runtime-pins.json` without end.
    public static let runtimePinLimit = 1024

    mutating func command(_ command: FleetCommand, now: MonotonicInstant, _ actions: inout [Action]) -> Reply {
        switch command {
        case .pin(let id, let options, let objects):
            return pin(id, options, objects: objects, now: now, &actions)
        case .unpin(let id):
            return unpin(id, &actions)
        case .disconnect(let id):
            guard let device = devices[id] else { return .refused(.unknownDevice(id)) }
            devices[id]?.held = true
            devices[id]?.wanted = false
            if device.wanted || device.link != .disconnected || device.state != .idle {
                actions.append(.deliver(id, .policyUpdated(wanted: false)))
            }
            requestEvaluation(&actions)
            return .done
        case .reconnect(let id):
            guard let device = devices[id] else { return .refused(.unknownDevice(id)) }
            devices[id]?.held = false
            if device.pinned, !device.wanted, !device.awaitingOwnership {
                devices[id]?.wanted = true
                actions.append(.deliver(id, .policyUpdated(wanted: true)))
            }
            actions.append(.deliver(id, .reconnectRequested))
            requestEvaluation(&actions)
            return .done
        case .prepareRead(let id):
            guard let device = devices[id] else { return .refused(.unknownDevice(id)) }
            guard device.state.acceptsWrites else { return .refused(.notConnected(id)) }
            return .done
        case .prepareWrite(let id):
            guard devices[id] != nil else { return .refused(.unknownDevice(id)) }
            return .writeSettings(configureWritesIfNeeded(id, &actions))
        case .subscribe(let id, let characteristic):
            guard let device = devices[id] else { return .refused(.unknownDevice(id)) }
            guard !machineConfiguration(of: device, className: device.className, in: configuration).subscriptions.contains(characteristic) else {
                return .refused(.alreadySubscribed(id, characteristic))
            }
            devices[id]?.removedSubscriptions.remove(characteristic)
            if devices[id]?.addedSubscriptions.contains(characteristic) == false { devices[id]?.addedSubscriptions.append(characteristic) }
            actions.append(.deliver(id, .subscriptionAdded(characteristic: characteristic)))
            return .done
        case .unsubscribe(let id, let characteristic):
            guard let device = devices[id] else { return .refused(.unknownDevice(id)) }
            guard machineConfiguration(of: device, className: device.className, in: configuration).subscriptions.contains(characteristic) else {
                return .refused(.notSubscribed(id, characteristic))
            }
            devices[id]?.addedSubscriptions.removeAll { $0 == characteristic }
            devices[id]?.removedSubscriptions.insert(characteristic)
            actions.append(.deliver(id, .subscriptionRemoved(characteristic: characteristic)))
            return .done
        }
    }

    private mutating func pin(
        _ id: DeviceID, _ options: FleetPinOptions, objects: [DeviceObject], now: MonotonicInstant, _ actions: inout [Action]
    ) -> Reply {
        if let problem = options.problem { return .refused(.invalidPinOptions(problem)) }
        let className = options.className ?? Self.defaultClassName
        if options.className != nil || !configuration.classes.isEmpty, configuration.classes[className] == nil {
            return .refused(.unknownClass(className))
        }
        guard devices[id]?.pinned != true else {
            return .refused(configuredPin(id).map { .pinnedByConfiguration(id, definedAt: $0.definedAt) } ?? .alreadyPinned(id))
        }
        guard runtimePins.count < Self.runtimePinLimit else { return .refused(.tooManyRuntimePins(limit: Self.runtimePinLimit)) }
        let pin = FleetRuntimeConfiguration.PinnedDevice(id: id, name: options.name, className: className, priority: options.priority)
        runtimePins[id] = pin
        if devices[id] == nil {
            addDevice(id, pinned: true, name: pin.name, className: className, priority: pin.priority, &actions)
            noteObjects(id, objects)
            if running { introduce(id, wanted: true, now: now, &actions) }
        } else {
            // A pool device becomes pinned: same machine, same link, now always wanted.
            devices[id]?.pinned = true
            devices[id]?.held = false
            devices[id]?.priority = pin.priority
            if let name = pin.name { devices[id]?.name = name }
            setClass(id, className, &actions)
            let wanted = devices[id].map(pinnedWanted) ?? false
            devices[id]?.wanted = wanted
            if running, wanted { actions.append(.deliver(id, .policyUpdated(wanted: true))) }
        }
        actions.append(.publish(.runtimePinsChanged(runtimePins.values.sorted { $0.id < $1.id })))
        requestEvaluation(&actions)
        return .done
    }

    private mutating func unpin(_ id: DeviceID, _ actions: inout [Action]) -> Reply {
        if let configured = configuredPin(id) { return .refused(.pinnedByConfiguration(id, definedAt: configured.definedAt)) }
        guard runtimePins.removeValue(forKey: id) != nil else {
            return .refused(devices[id] == nil ? .unknownDevice(id) : .notPinned(id))
        }
        release(id, &actions)
        actions.append(.publish(.runtimePinsChanged(runtimePins.values.sorted { $0.id < $1.id })))
        requestEvaluation(&actions)
        return .done
    }

    /// A device that stops being pinned (`unpin`) stays as a pool candidate when the pool is on
    /// (the next placement decides whether it keeps its link), else is forgotten.
    mutating func release(_ id: DeviceID, _ actions: inout [Action]) {
        devices[id]?.pinned = false
        devices[id]?.priority = 0
        if let poolClass = configuration.poolClassName { setClass(id, poolClass, &actions) } else { devices[id]?.className = nil }
        if !configuration.poolEnabled { forget(id, because: .unpinned, &actions) }
    }

    /// Gives the device a class; its machine takes the class's settings without losing its link.
    mutating func setClass(_ id: DeviceID, _ className: String, _ actions: inout [Action]) {
        guard let device = devices[id] else { return }
        devices[id]?.className = className
        let running = machineConfiguration(of: device, className: device.className, in: configuration)
        let wanted = machineConfiguration(of: device, className: className, in: configuration)
        guard wanted != running else { return }
        actions.append(.reconfigureDevice(id, wanted, configuration.reconnect))
    }

    /// The configuration's pin of `id`, if it pins it.
    func configuredPin(_ id: DeviceID) -> FleetRuntimeConfiguration.PinnedDevice? {
        configuration.pinned.first { $0.id == id }
    }

    /// The run-time pins a previous run saved, before `start`: they are merged with the
    /// configuration's like pins made now (a device the configuration also pins keeps the
    /// configuration's settings).
    mutating func restoreRuntimePins(_ pins: [FleetRuntimeConfiguration.PinnedDevice]) {
        for pin in pins { runtimePins[pin.id] = pin }
    }

    /// The configuration's pins, then the run-time pins it does not also pin.
    func effectivePins(_ configuration: FleetRuntimeConfiguration) -> [FleetRuntimeConfiguration.PinnedDevice] {
        let configured = Set(configuration.pinned.map(\.id))
        return configuration.pinned + runtimePins.values.filter { !configured.contains($0.id) }.sorted { $0.id < $1.id }
    }
}
