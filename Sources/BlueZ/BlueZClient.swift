import DBus

/// A typed client of bluetoothd over one long-lived D-Bus connection.
///
/// `start()` follows `org.bluez`'s owner and keeps a `BlueZObjectTree` mirror current: one
/// `GetManagedObjects` whenever bluetoothd appears (at start and after every restart), then only
/// signals, never polling. `events` delivers every change, typed (`BlueZEvent`), after it was
/// applied to `tree`.
///
/// Signals bluetoothd sent before the `GetManagedObjects` reply are already reflected in it; they
/// are recognised by their serial number (lower than the reply's) and skipped, so a change is
/// never replayed over a newer snapshot.
///
/// The client runs on its connection's thread (it shares the connection's executor), so a signal
/// goes from the socket to `handle` without waking another thread. Characteristic values take a
/// shorter way still when value receivers are set (`setValueReceivers`): see there.
public actor BlueZClient {
    public let connection: DBusConnection
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.unownedExecutor }
    public private(set) var tree = BlueZObjectTree()
    /// bluetoothd's unique name while it is on the bus.
    public private(set) var owner: String?
    /// bluetoothd is on the bus and its objects were read (`appeared` was reported).
    public var objectsRead: Bool { owner != nil && heldSignals == nil }
    /// Signals from bluetoothd that did not have the documented shape.
    public private(set) var malformedSignals = 0
    /// Between `start()` and `stop()`: the client knows whether bluetoothd is on the bus, and
    /// sends it nothing while it is not (`bluezCall`).
    var following = false

    public nonisolated let events: AsyncStream<BlueZEvent>
    private let eventSink: AsyncStream<BlueZEvent>.Continuation
    var snapshotSerial: UInt32 = 0
    /// Signals that arrive while a snapshot is being fetched wait here, then those newer than
    /// the snapshot are applied on top of it.
    var heldSignals: [DBusMessage]?
    private var tasks: [Task<Void, Never>] = []
    private var treeWaiters: [UInt64: TreeWaiter] = [:]
    private var nextWaiterID: UInt64 = 0
    var valueReceivers: (@Sendable (BlueZCharacteristicSource) -> BlueZValueReceiver?)?
    private var signalSubscription: DBusSignalSubscription?
    /// Retries of a failed `GetManagedObjects` while the same bluetoothd owns its name; ended
    /// when the owner changes or the client stops.
    private var snapshotRetry: Task<Void, Never>?
    /// The backoff between those retries.
    let snapshotBackoff: SnapshotBackoff
    /// `GetManagedObjects` calls that failed (an error, a timeout or a reply that did not decode).
    public private(set) var snapshotFailures = 0
    /// Characteristic path → where its values go, found once per path and dropped whenever
    /// objects come or go (a notification then costs one lookup, made with the message's own
    /// path bytes on the fast way).
    var characteristicRoutes = DBusObjectPathDictionary<CharacteristicRoute>()

    private struct TreeWaiter {
        let condition: @Sendable (BlueZObjectTree) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    public init(connection: DBusConnection, snapshotBackoff: SnapshotBackoff = SnapshotBackoff()) {
        self.connection = connection
        self.snapshotBackoff = snapshotBackoff
        (events, eventSink) = AsyncStream<BlueZEvent>.makeStream()
    }

    /// Subscribes to bluetoothd's signals and owner, then mirrors its tree if it is present.
    /// Returns once the subscriptions are in place (and the first snapshot taken, if any).
    public func start() async throws {
        // Signals are handled synchronously on the connection's thread, which is this actor's
        // executor: no task is resumed and no thread woken per signal. Characteristic values
        // are read in place, before the connection decodes them (`claimValue`).
        let subscription = try await connection.subscribe(
            matching: MatchRule(sender: BlueZInterfaces.service),
            claim: { [weak self] message in
                guard let self else { return false }
                return self.connection.callIsolated(self, message) { client, message in client.claimValue(message) }
            },
            onSignals: { [weak self] batch in self?.assumeIsolated { client in for signal in batch { client.handle(signal) } } },
            onEnd: { [weak self] _ in self?.assumeIsolated { $0.connectionLost() } })
        signalSubscription = subscription
        let owners = try await connection.watchNameOwner(BlueZInterfaces.service)
        following = true
        var ownerIterator = owners.makeAsyncIterator()
        if let initial = await ownerIterator.next() { await ownerChanged(to: initial) }
        tasks.append(Task { [weak self] in
            while let next = await ownerIterator.next() {
                await self?.ownerChanged(to: next)
            }
        })
    }

    /// Sends every characteristic value announced on the D-Bus path (`Value` alone in a
    /// `PropertiesChanged` of `GattCharacteristic1`, which is how bluetoothd announces a
    /// notification) to a receiver, on the connection's thread, as it arrives: read in place from
    /// the message (no `DBusValue` is built), no event, no thread hop, no update of the mirror
    /// (whose `Value` then stays as it was at resolution; `ReadValue` reads the current one).
    /// Everything else about the characteristic still goes through the mirror and `events`, and
    /// so does a `Value` changed together with anything else (a `valueChanged` event).
    /// Set it before `start()`; nil restores the default (every value arrives as a
    /// `valueChanged` event).
    ///
    /// `receivers` is asked where a characteristic's values go at its first value, and again
    /// after objects came or went; nil drops them. A receiver is then called with each value.
    /// Both must be quick and must not block: they run on the thread that serves the bus.
    public func setValueReceivers(_ receivers: (@Sendable (BlueZCharacteristicSource) -> BlueZValueReceiver?)?) {
        valueReceivers = receivers
        characteristicRoutes.removeAll()
    }


    /// Stops following bluetoothd (the connection stays open: its owner closes it).
    public func stop() async {
        following = false
        snapshotRetry?.cancel()
        snapshotRetry = nil
        for task in tasks { task.cancel() }
        tasks.removeAll()
        await signalSubscription?.cancel()
        signalSubscription = nil
        eventSink.finish()
    }

    /// Whether a connection may be attempted through the adapter at `path`, as the mirror has it
    /// now: bluetoothd's objects read and the adapter powered (`PowerState` "on-disabling", a
    /// power-off under way, counts as off: see `BlueZAdapter.isOn(powerState:)`).
    public func isUsable(adapter path: DBusObjectPath) -> Bool {
        objectsRead && tree.adapter(at: path)?.powered == true
    }

    // MARK: - Following bluetoothd

    private func ownerChanged(to newOwner: String?) async {
        guard newOwner != owner else { return }
        snapshotRetry?.cancel()
        snapshotRetry = nil
        characteristicRoutes.removeAll()
        heldSignals = nil
        if owner != nil {
            owner = nil
            tree = BlueZObjectTree()
            eventSink.yield(.vanished)
            treeChanged()
        }
        guard let newOwner else { return }
        owner = newOwner
        // bluetoothd is not "present" until its tree was read: until then its signals wait (those
        // older than the snapshot are dropped then), and no `appeared` is reported.
        heldSignals = []
        let retryIn = snapshotBackoff.delay(afterFailures: 1)
        guard await !takeSnapshot(of: newOwner, attempt: 1, retryIn: retryIn) else { return }
        snapshotRetry = Task { [weak self] in await self?.retrySnapshot(of: newOwner, after: retryIn) }
    }

    /// Asks for the snapshot again, with backoff, for as long as `owner` keeps bluetoothd's name
    /// (a new owner, or none, ends it: `ownerChanged` cancels this task).
    private func retrySnapshot(of owner: String, after firstDelay: Duration) async {
        var attempt = 1
        var delay = firstDelay
        while !Task.isCancelled, self.owner == owner {
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
            guard !Task.isCancelled, self.owner == owner else { return }
            attempt += 1
            delay = snapshotBackoff.delay(afterFailures: attempt)
            if await takeSnapshot(of: owner, attempt: attempt, retryIn: delay) { return }
        }
    }

    /// One `GetManagedObjects`: on success the mirror is rebuilt, `appeared` reported and the
    /// signals held meanwhile applied; true when done (or moot: the owner changed meanwhile).
    /// A failure is reported (`snapshotFailed`, retried in `retryIn`) and leaves the signals
    /// held for the next try.
    private func takeSnapshot(of owner: String, attempt: Int, retryIn: Duration) async -> Bool {
        // Signals held before this call are older than its reply, which reflects them.
        heldSignals = []
        do {
            let reply = try await connection.call(.methodCall(
                destination: BlueZInterfaces.service, path: .root, interface: BlueZInterfaces.objectManager,
                member: "GetManagedObjects", autoStart: false))
            guard self.owner == owner, reply.sender == owner else { return true }  // it restarted meanwhile
            tree = try BlueZObjectTree(managedObjects: reply.body.first ?? .stringVariantMap([:]))
            snapshotSerial = reply.serial
            eventSink.yield(.appeared(owner: owner, adapters: tree.adapters, devices: tree.devices))
            treeChanged()
            let held = heldSignals ?? []
            heldSignals = nil
            for signal in held { handle(signal) }
            return true
        } catch {
            guard self.owner == owner else { return true }
            snapshotFailures += 1
            eventSink.yield(.snapshotFailed(attempt: attempt, error: "\(error)", retryIn: retryIn))
            return false
        }
    }

    /// Waits until `condition` holds for the mirror (checked now and after every change), at most
    /// `timeout`. Returns false on timeout or cancellation: a wait never hangs.
    public func waitForTree(
        timeout: Duration, _ condition: @escaping @Sendable (BlueZObjectTree) -> Bool
    ) async -> Bool {
        if condition(tree) { return true }
        nextWaiterID += 1
        let id = nextWaiterID
        let expiry = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.resolveWaiter(id, satisfied: false)
        }
        defer { expiry.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: self) { continuation in
                treeWaiters[id] = TreeWaiter(condition: condition, continuation: continuation)
            }
        } onCancel: {
            Task { await self.resolveWaiter(id, satisfied: false) }
        }
    }

    private func resolveWaiter(_ id: UInt64, satisfied: Bool) {
        treeWaiters.removeValue(forKey: id)?.continuation.resume(returning: satisfied)
    }

    private func treeChanged() {
        guard !treeWaiters.isEmpty else { return }
        for (id, waiter) in treeWaiters where waiter.condition(tree) {
            resolveWaiter(id, satisfied: true)
        }
    }

    private func connectionLost() {
        snapshotRetry?.cancel()
        snapshotRetry = nil
        if owner != nil {
            owner = nil
            tree = BlueZObjectTree()
            eventSink.yield(.vanished)
        }
        eventSink.finish()
    }

    /// Applies one signal to the mirror and reports what changed, typed (each signal's variant
    /// dictionaries are parsed here, once: `BlueZObjectTree.apply`).
    private func handle(_ signal: DBusMessage) {
        if heldSignals != nil {
            heldSignals?.append(signal)
            return
        }
        guard let owner, signal.sender == owner, signal.serial > snapshotSerial, let path = signal.path else { return }
        do {
            switch (signal.interface, signal.member) {
            case (BlueZInterfaces.objectManager?, "InterfacesAdded"):
                characteristicRoutes.removeAll()
                let object = try signal.body.decode(DBusObjectPath.self, at: 0)
                let interfaces = try signal.body.decode([String: [String: DBusValue]].self, at: 1)
                report(tree.apply(interfacesAdded: object, interfaces))
            case (BlueZInterfaces.objectManager?, "InterfacesRemoved"):
                characteristicRoutes.removeAll()
                let object = try signal.body.decode(DBusObjectPath.self, at: 0)
                let interfaces = try signal.body.decode([String].self, at: 1)
                report(tree.apply(interfacesRemoved: object, interfaces))
            case (BlueZInterfaces.properties?, "PropertiesChanged"):
                let interface = try signal.body.decode(String.self, at: 0)
                let changed = try signal.body.decode([String: DBusValue].self, at: 1)
                let invalidated = try signal.body.decode([String].self, at: 2)
                if valueReceivers != nil, let value = try characteristicValue(path, interface, changed, invalidated) {
                    value.route.receiver?(value.bytes)
                    return
                }
                if let events = try tree.apply(propertiesChanged: path, interface: interface, changed: changed, invalidated: invalidated) {
                    report(events)
                }
            case (BlueZInterfaces.device?, "Disconnected"):
                let reason = try signal.body.decode(String.self, at: 0)
                let message = (try? signal.body.decode(String.self, at: 1)) ?? ""
                eventSink.yield(.deviceDisconnected(path, reason: reason, message: message))
            default:
                break
            }
        } catch {
            malformedSignals += 1
            eventSink.yield(.malformedSignal("\(signal.member ?? "?") from \(path): \(error)"))
        }
    }

    /// Reports what a signal changed, after it was applied to the mirror.
    private func report(_ events: [BlueZEvent]) {
        for event in events { eventSink.yield(event) }
        treeChanged()
    }
}
