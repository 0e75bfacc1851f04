/// A well-known name whose owner this connection follows, for signal filtering and watchers.
struct TrackedName {
    var owner: String?
    /// False until `GetNameOwner` answered; `NameOwnerChanged` seen before that is already
    /// reflected in the answer (the bus orders both), so it is ignored.
    var resolved = false
    var references = 0
    var watchers: [UInt64: AsyncStream<String?>.Continuation] = [:]
    var resolutionWaiters: [CheckedContinuation<Void, Never>] = []
}

extension DBusConnection {
    /// Follows who owns `name`: the stream yields the current owner's unique name (nil when
    /// nobody owns it) first, then every change: a service appearing, vanishing and coming back
    /// (with a new unique name) is seen as `":1.5"`, `nil`, `":1.9"`.
    public func watchNameOwner(_ name: String) async throws -> AsyncStream<String?> {
        try DBusValidation.checkBusName(name)
        guard Self.isWellKnown(name) else {
            throw DBusError(name: DBusError.invalidArgs, message: "\(name) is not a well-known name")
        }
        try await retainNameTracking(name)
        let (stream, continuation) = AsyncStream<String?>.makeStream()
        let id = nextIdentifier()
        guard trackedNames[name] != nil else {
            continuation.finish()
            return stream
        }
        trackedNames[name]?.watchers[id] = continuation
        continuation.yield(trackedNames[name]?.owner)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeNameWatcher(name, id: id) }
        }
        return stream
    }

    /// The current owner of a name this connection tracks (through `watchNameOwner` or a
    /// signal subscription with that sender), or nil.
    public func trackedOwner(of name: String) -> String? {
        trackedNames[name]?.owner
    }

    /// Asks the bus once who owns `name` (nil when nobody does).
    public func nameOwner(of name: String) async throws -> String? {
        try DBusValidation.checkBusName(name)
        do {
            let reply = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", [.string(name)])
            return try reply.decode(String.self, at: 0)
        } catch let error as DBusError where error.name == DBusError.nameHasNoOwner {
            return nil
        }
    }

    func removeNameWatcher(_ name: String, id: UInt64) {
        guard trackedNames[name]?.watchers.removeValue(forKey: id) != nil else { return }
        releaseNameTracking(name)
    }

    /// Starts (or joins) tracking `name`; returns once its owner is known.
    func retainNameTracking(_ name: String) async throws {
        if trackedNames[name] != nil {
            trackedNames[name]?.references += 1
            if trackedNames[name]?.resolved == false {
                await withCheckedContinuation(isolation: self) { trackedNames[name]?.resolutionWaiters.append($0) }
            }
            return
        }
        var tracked = TrackedName()
        tracked.references = 1
        trackedNames[name] = tracked
        let rule = Self.ownerChangeRule(name)
        do {
            try await addMatch(rule)
            let owner = try await nameOwner(of: name)
            trackedNames[name]?.owner = owner
            trackedNames[name]?.resolved = true
        } catch {
            if let waiters = trackedNames.removeValue(forKey: name)?.resolutionWaiters {
                for waiter in waiters { waiter.resume() }
            }
            throw error
        }
        if let waiters = trackedNames[name]?.resolutionWaiters {
            trackedNames[name]?.resolutionWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
    }

    func releaseNameTracking(_ name: String) {
        guard var tracked = trackedNames[name] else { return }
        tracked.references -= 1
        if tracked.references > 0 {
            trackedNames[name] = tracked
            return
        }
        trackedNames[name] = nil
        for (_, watcher) in tracked.watchers { watcher.finish() }
        removeMatch(Self.ownerChangeRule(name))
    }

    func noteNameOwnerChanged(_ message: DBusMessage) {
        guard let name = try? message.body.decode(String.self, at: 0), trackedNames[name]?.resolved == true,
            let newOwner = try? message.body.decode(String.self, at: 2)
        else { return }
        let owner: String? = newOwner.isEmpty ? nil : newOwner
        trackedNames[name]?.owner = owner
        for (_, watcher) in trackedNames[name]?.watchers ?? [:] { watcher.yield(owner) }
    }

    static func ownerChangeRule(_ name: String) -> MatchRule {
        MatchRule(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", arg0: name)
    }
}
