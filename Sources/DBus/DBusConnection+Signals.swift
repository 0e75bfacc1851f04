import CDBus

/// Where a subscription's signals go: one element per signal, one array per delivery round, or
/// a handler called on the connection's thread with each round's array.
enum SignalSink {
    case each(AsyncThrowingStream<DBusMessage, any Error>.Continuation)
    case batches(AsyncThrowingStream<[DBusMessage], any Error>.Continuation)
    case handler(SignalHandler)

    func finish(throwing error: any Error) {
        switch self {
        case .each(let continuation): continuation.finish(throwing: error)
        case .batches(let continuation): continuation.finish(throwing: error)
        case .handler(let handler): handler.onEnd(error)
        }
    }
}

/// The closures of a `subscribe(matching:claim:onSignals:onEnd:)` subscription.
struct SignalHandler {
    let claim: DBusSignalClaim?
    let onSignals: @Sendable ([DBusMessage]) -> Void
    let onEnd: @Sendable (any Error) -> Void
}

/// Looks at a matching signal before it is decoded and returns true to take it whole: it is
/// then never decoded and never reaches `onSignals`. See `subscribe(matching:claim:onSignals:onEnd:)`.
public typealias DBusSignalClaim = @Sendable (borrowing DBusMessageReader) -> Bool

/// A subscription made with `subscribe(matching:claim:onSignals:onEnd:)`; `cancel()` ends it (removes
/// the match rule). Releasing it does not: the subscription lives until cancelled or the
/// connection closes.
public struct DBusSignalSubscription: Sendable {
    let id: UInt64
    let connection: DBusConnection

    public func cancel() async {
        await connection.removeSubscription(id)
    }
}

/// One signal subscription: its rule and the stream it feeds.
struct Subscription {
    let rule: MatchRule
    let sink: SignalSink

    /// The claim of a handler subscription that has one.
    var claim: DBusSignalClaim? {
        if case .handler(let handler) = sink { return handler.claim }
        return nil
    }
}

/// How a signal stream buffers when its consumer falls behind.
public enum SignalBuffering: Sendable {
    /// Keep every signal (the default: signals such as `InterfacesAdded` must not be lost).
    case unbounded
    /// Keep the newest `n` signals and drop older ones (for high-rate telemetry).
    case newest(Int)
}

extension DBusConnection {
    /// Subscribes to the signals matching `rule`.
    ///
    /// Returns only after the bus confirmed the match rule (`AddMatch` replied), so a caller can
    /// subscribe first and then act, without missing signals caused by its action. When the rule
    /// names a well-known sender, its owner is resolved before this returns, too.
    /// The stream finishes with `DBusError` (`Disconnected`) if the connection is lost;
    /// ending the iteration removes the rule.
    public func signals(
        matching rule: MatchRule, buffering: SignalBuffering = .unbounded
    ) async throws -> AsyncThrowingStream<DBusMessage, any Error> {
        let policy: AsyncThrowingStream<DBusMessage, any Error>.Continuation.BufferingPolicy
        switch buffering {
        case .unbounded: policy = .unbounded
        case .newest(let count): policy = .bufferingNewest(max(1, count))
        }
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, any Error>.makeStream(bufferingPolicy: policy)
        let id = nextIdentifier()
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeSubscription(id) }
        }
        try await subscribe(rule, id: id, sink: .each(continuation))
        return stream
    }

    /// Like `signals(matching:)`, but delivers the signals in arrays: everything that matched
    /// since the consumer last woke up, in arrival order. For high-rate consumers (notification
    /// firehoses), one wake-up and one stream element per burst instead of per signal.
    public func signalBatches(matching rule: MatchRule) async throws -> AsyncThrowingStream<[DBusMessage], any Error> {
        let (stream, continuation) = AsyncThrowingStream<[DBusMessage], any Error>.makeStream()
        let id = nextIdentifier()
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeSubscription(id) }
        }
        try await subscribe(rule, id: id, sink: .batches(continuation))
        return stream
    }

    /// Like `signalBatches(matching:)`, but calls `onSignals` synchronously on the connection's
    /// thread (the executor of this actor) with each round's signals, in arrival order, instead
    /// of resuming a task: no thread wake-up and no executor hop per round. For consumers that
    /// share this connection's executor (an actor whose `unownedExecutor` is this connection's
    /// may `assumeIsolated` inside the handler) and for high-rate signals. `onEnd` is called once
    /// if the connection is lost (with `Disconnected`); neither is called after `cancel()`.
    ///
    /// `claim`, when given, sees each matching signal first, as it arrives and before it is
    /// decoded, through a `DBusMessageReader` over libdbus's own copy: for signals so frequent
    /// that building their `DBusValue`s would cost more than handling them (a notification
    /// firehose), it reads what it needs in place and returns true to take the signal whole;
    /// the signal is then not decoded and not passed to `onSignals`. A signal it returns false
    /// for takes the normal way, unchanged. Order is kept: before `claim` is called, every
    /// signal matched earlier is handed over (`onSignals` may then get a shorter round), so
    /// `claim` and `onSignals` together see this subscription's signals in arrival order, and
    /// `claim` sees the state that the earlier ones left. A signal claimed here still reaches
    /// any other subscription that matches it, decoded; the bus's `NameOwnerChanged` is never
    /// offered (the connection needs it for name tracking).
    ///
    /// The handlers must be quick and must not block: they run on the thread that serves the bus.
    public func subscribe(
        matching rule: MatchRule, claim: DBusSignalClaim? = nil, onSignals: @escaping @Sendable ([DBusMessage]) -> Void,
        onEnd: @escaping @Sendable (any Error) -> Void
    ) async throws -> DBusSignalSubscription {
        let id = nextIdentifier()
        try await subscribe(rule, id: id, sink: .handler(SignalHandler(claim: claim, onSignals: onSignals, onEnd: onEnd)))
        return DBusSignalSubscription(id: id, connection: self)
    }

    /// Registers the subscription and waits for the bus to accept its rule. On failure the
    /// sink is finished with the error, which is also thrown.
    private func subscribe(_ rule: MatchRule, id: UInt64, sink: SignalSink) async throws {
        let trackedSender = try prepareSubscription(rule, sink: sink)
        if let trackedSender {
            do {
                try await retainNameTracking(trackedSender)
            } catch {
                sink.finish(throwing: error)
                throw error
            }
        }
        subscriptions[id] = Subscription(rule: rule, sink: sink)
        do {
            try await addMatch(rule)
        } catch {
            abandonSubscription(id, trackedSender: trackedSender, error: error)
            throw error
        }
    }

    /// Checks the rule and the connection; returns the well-known sender to track, if any.
    private func prepareSubscription(_ rule: MatchRule, sink: SignalSink) throws -> String? {
        do {
            try rule.validate()
            guard isOpen else { throw DBusError(name: DBusError.disconnected, message: "connection is closed") }
        } catch {
            sink.finish(throwing: error)
            throw error
        }
        return rule.sender.flatMap { Self.isWellKnown($0) ? $0 : nil }
    }

    private func abandonSubscription(_ id: UInt64, trackedSender: String?, error: any Error) {
        let sink = subscriptions.removeValue(forKey: id)?.sink
        if let trackedSender { releaseNameTracking(trackedSender) }
        sink?.finish(throwing: error)
    }

    /// Emits a signal from an object this connection exports (or any path it speaks for).
    public func emitSignal(
        path: DBusObjectPath, interface: String, member: String, _ body: [DBusValue] = [], destination: String? = nil
    ) throws {
        try send(.signal(path: path, interface: interface, member: member, body: body, destination: destination))
    }

    func removeSubscription(_ id: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        if let sender = subscription.rule.sender, Self.isWellKnown(sender) { releaseNameTracking(sender) }
        removeMatch(subscription.rule)
    }

    func addMatch(_ rule: MatchRule) async throws {
        _ = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", [.string(rule.ruleString)])
    }

    /// Fire and forget: the bus forgets rules of closed connections anyway.
    func removeMatch(_ rule: MatchRule) {
        guard isOpen else { return }
        var message = DBusMessage.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RemoveMatch", body: [.string(rule.ruleString)])
        message.noReplyExpected = true
        try? send(message)
    }

    static func isWellKnown(_ name: String) -> Bool {
        !name.hasPrefix(":") && name != "org.freedesktop.DBus"
    }

    /// Queues `message` for every subscription it matches, except those that claimed it
    /// (`offerToClaims`).
    func deliverSignal(_ message: DBusMessage, claimedBy claims: SignalClaims = SignalClaims()) {
        if message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
            message.interface == "org.freedesktop.DBus"
        {
            noteNameOwnerChanged(message)
        }
        for (id, subscription) in subscriptions where !claims.contains(id) {
            let owner = subscription.rule.sender.flatMap { trackedNames[$0]?.owner }
            if subscription.rule.matches(message, senderOwner: owner) {
                undeliveredSignals.append((id, message))
            }
        }
    }

    /// Yields the signals matched so far, in arrival order.
    ///
    /// Matching happens per message, but yielding waits until the connection's thread has read
    /// everything available and is about to sleep, or 256 signals are waiting (and happens
    /// before a reply or a disconnection, which must not overtake earlier signals): a consumer
    /// that keeps up is otherwise woken for nearly every signal, and those thread wake-ups cost
    /// more CPU than decoding. Yielding a whole burst back to back lets one wake-up drain it.
    /// Measured with Benchmarks/dbus-bench: see the commit messages.
    func flushSignals() {
        guard !undeliveredSignals.isEmpty else { return }
        handOverSignals()
    }

    /// `flushSignals`' work, out of line: it sets up generic continuations' frames on entry,
    /// which cost more than the emptiness check that nearly always ends a flush (claims call
    /// `flushSignals` once per signal).
    @inline(never)
    private func handOverSignals() {
        let pending = undeliveredSignals
        undeliveredSignals.removeAll(keepingCapacity: true)
        var batches: [UInt64: [DBusMessage]] = [:]
        for (id, message) in pending {
            // A subscription that ended meanwhile simply gets nothing.
            switch subscriptions[id]?.sink {
            case .each(let continuation)?: continuation.yield(message)
            case .batches?, .handler?: batches[id, default: []].append(message)
            case nil: break
            }
        }
        for (id, messages) in batches {
            switch subscriptions[id]?.sink {
            case .batches(let continuation)?: continuation.yield(messages)
            case .handler(let handler)?: handler.onSignals(messages)
            default: break
            }
        }
    }
}
