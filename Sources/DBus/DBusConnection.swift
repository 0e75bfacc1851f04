import CDBus

/// A private connection to a D-Bus bus: method calls, signal subscriptions, name-owner tracking
/// and exported objects.
///
/// Guarantees:
/// - The connection never calls `_exit()` when the bus goes away (libdbus's shared connections
///   do): it fails pending calls with `org.freedesktop.DBus.Error.Disconnected`, finishes every
///   signal stream with that error, and resumes `waitUntilDisconnected()`.
/// - Every method call has a timeout; cancelling the calling task cancels the call.
/// - Nothing invalid reaches libdbus: names, paths, signatures and strings are validated first.
/// - The actor runs on the connection's own thread (its executor), the only thread that touches
///   libdbus; decoded messages leave as `Sendable` values.
///
/// Call `close()` when done: until then the connection keeps itself (and its thread) alive.
public actor DBusConnection {
    let thread: ConnectionThread
    let raw: OpaquePointer
    /// This connection's unique name on the bus (`:1.42`).
    public nonisolated let uniqueName: String

    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    var isOpen = true
    /// Set when the bus connection was lost during dispatch; libdbus is released right after.
    var mustReleaseLibdbus = false
    var libdbusReleased = false
    var nextID: UInt64 = 1
    var pendingCalls: [UInt64: PendingCall] = [:]
    var subscriptions: [UInt64: Subscription] = [:] {
        // Subscriptions change rarely; signals ask for these on every arrival.
        didSet {
            claimingSubscriptions = subscriptions.values.count(where: { $0.claim != nil })
            signalRoutes = nil
        }
    }
    /// How many subscriptions have a claim (`offerToClaims` is skipped while there are none).
    var claimingSubscriptions = 0
    /// The subscriptions as `offerToClaims` reads them; nil once stale.
    var signalRoutes: [SignalRoute]?
    /// Signals matched during the current dispatch round, yielded together at its end.
    var decodeCache = DecodeCache()
    /// Matched signals waiting for `flushSignals`, with the subscription each is for.
    var undeliveredSignals: [(UInt64, DBusMessage)] = [] {
        didSet { thread.hasSignalsToHandOver = !undeliveredSignals.isEmpty }
    }
    var trackedNames: [String: TrackedName] = [:] {
        didSet { signalRoutes = nil }  // an owner a route expects may have changed
    }
    var disconnectWaiters: [CheckedContinuation<Void, Never>] = []
    var objects = ObjectRegistry()
    /// Incoming messages libdbus delivered that could not be decoded (counted, then dropped).
    public private(set) var undecodableMessages = 0
    /// Signals a subscription's claim took (`subscribe(matching:claim:onSignals:onEnd:)`): read
    /// in place, and not decoded for that subscription.
    public internal(set) var claimedSignals = 0

    /// The default timeout of `call` (libdbus's own default is also 25 s).
    public static let defaultTimeout: Duration = .seconds(25)

    private init(thread: ConnectionThread, raw: OpaquePointer, uniqueName: String) {
        self.thread = thread
        self.raw = raw
        self.uniqueName = uniqueName
    }

    // MARK: - Connecting

    /// Connects and registers with the bus (`Hello`). Blocking libdbus work happens on the
    /// connection's own thread, never on the caller's.
    /// `environment` supplies `DBUS_SYSTEM_BUS_ADDRESS` / `DBUS_SESSION_BUS_ADDRESS` (this
    /// process's environment when nil), so callers and tests never need to change the process
    /// environment.
    public static func connect(
        to address: BusAddress, threadName: String = "dbus", environment: [String: String]? = nil
    ) async throws -> DBusConnection {
        let text = try address.resolved(environment: environment ?? BusAddress.processEnvironment)
        try DBusValidation.checkString(text)
        let thread = try ConnectionThread(name: threadName)
        let opened: Result<UnsafeTransfer<OpaquePointer>, DBusError> = await withCheckedContinuation { continuation in
            thread.perform {
                continuation.resume(returning: openConnection(text, describedAs: address).map { UnsafeTransfer(value: $0) })
            }
        }
        let raw: OpaquePointer
        switch opened {
        case .success(let transfer): raw = transfer.value
        case .failure(let error):
            thread.terminate()
            throw error
        }
        let uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        let connection = DBusConnection(thread: thread, raw: raw, uniqueName: uniqueName)
        await connection.installCallbacks()
        return connection
    }

    /// Runs on the loop thread before any watch is installed, so libdbus's blocking `Hello`
    /// round trip uses its own internal I/O.
    private static func openConnection(_ text: String, describedAs address: BusAddress) -> Result<OpaquePointer, DBusError> {
        dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        func failure(_ what: String) -> DBusError {
            if dbus_error_is_set(&error) != 0 {
                let name = error.name.map { String(cString: $0) } ?? DBusError.failed
                let message = error.message.map { String(cString: $0) } ?? ""
                return DBusError(name: name, message: "\(what): \(message)")
            }
            return DBusError(name: DBusError.failed, message: what)
        }
        guard let connection = dbus_connection_open_private(text, &error) else {
            return .failure(failure("cannot connect to the \(address) (\(text))"))
        }
        guard dbus_bus_register(connection, &error) != 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            return .failure(failure("cannot register with the \(address) (\(text))"))
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        return .success(connection)
    }

    private func installCallbacks() {
        let threadPointer = Unmanaged.passUnretained(thread).toOpaque()
        dbus_connection_set_watch_functions(raw, addWatchCallback, removeWatchCallback, toggleWatchCallback, threadPointer, nil)
        dbus_connection_set_timeout_functions(
            raw, addTimeoutCallback, removeTimeoutCallback, toggleTimeoutCallback, threadPointer, nil)
        // The filter holds the connection until `close()` removes it.
        dbus_connection_add_filter(raw, filterCallback, Unmanaged.passRetained(self).toOpaque(), releaseConnectionCallback)
        thread.dispatcher = { [unowned self] in
            self.onLoopThread(()) { connection, _ in connection.dispatchIncoming() }
        }
        thread.beforeSleeping = { [unowned self] in
            self.onLoopThread(()) { connection, _ in connection.flushSignals() }
        }
    }

    // MARK: - Lifecycle

    /// True until `close()` or until the bus connection is lost.
    public var isConnected: Bool { isOpen }

    /// Closes the connection: pending calls fail with `Disconnected`, signal streams finish, and
    /// the connection's thread exits.
    public func close() {
        guard isOpen else { return }
        shutDown(reason: DBusError(name: DBusError.disconnected, message: "connection closed"))
        releaseLibdbus()
    }

    /// Closes and releases the libdbus connection (once). Never called from inside
    /// `dbus_connection_dispatch`, which must not see its connection finalized under it.
    private func releaseLibdbus() {
        guard !libdbusReleased else { return }
        libdbusReleased = true
        dbus_connection_close(raw)
        // Removing the filter releases the reference it held on this actor.
        dbus_connection_remove_filter(raw, filterCallback, Unmanaged.passUnretained(self).toOpaque())
        dbus_connection_unref(raw)
        thread.forgetLibdbus()
    }

    deinit {
        thread.terminate()
    }

    /// Returns once the connection is closed or lost.
    public func waitUntilDisconnected() async {
        if !isOpen { return }
        await withCheckedContinuation(isolation: self) { disconnectWaiters.append($0) }
    }

    func shutDown(reason: DBusError) {
        guard isOpen else { return }
        flushSignals()
        isOpen = false
        for (_, call) in pendingCalls {
            dbus_pending_call_cancel(call.pending)
            dbus_pending_call_unref(call.pending)
            call.continuation.resume(throwing: reason)
        }
        pendingCalls.removeAll()
        for (_, subscription) in subscriptions {
            subscription.sink.finish(throwing: reason)
        }
        subscriptions.removeAll()
        for (_, tracked) in trackedNames {
            for (_, watcher) in tracked.watchers { watcher.finish() }
            for waiter in tracked.resolutionWaiters { waiter.resume() }
        }
        trackedNames.removeAll()
        objects.removeAll()
        for waiter in disconnectWaiters { waiter.resume() }
        disconnectWaiters.removeAll()
    }

    // MARK: - Incoming messages

    func dispatchIncoming() {
        guard !libdbusReleased else { return }
        // Signals are taken off the queue and handled here. libdbus's dispatch would do no more
        // for them than copy its filter list and call the filter (`handleIncoming`) through a C
        // callback, which cost about a tenth of receiving a notification (callgrind). Everything
        // else is dispatched: replies complete their pending calls there, and method calls reach
        // the filter. The head of the queue is always handled first, so order is kept.
        while isOpen, let message = dbus_connection_borrow_message(raw) {
            if dbus_message_get_type(message) == MessageTypeCode.signal {
                dbus_connection_steal_borrowed_message(raw, message)
                _ = handleIncoming(message)
                dbus_message_unref(message)
            } else {
                dbus_connection_return_message(raw, message)
                guard dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS else { break }
            }
        }
        // Normally the loop flushes when it runs out of input; a long burst is handed over in
        // slices so that consumers are not kept waiting behind it.
        if undeliveredSignals.count >= 256 { flushSignals() }
        if mustReleaseLibdbus {
            // The filter may hold the last reference to this actor; keep it alive until we return.
            withExtendedLifetime(self) { releaseLibdbus() }
        }
    }

    /// Every incoming message that is not a reply to a pending call passes here: signals from
    /// `dispatchIncoming`, method calls through libdbus's dispatch and the filter.
    func handleIncoming(_ message: OpaquePointer) -> DBusHandlerResult {
        let type = dbus_message_get_type(message)
        let sender = dbus_message_get_sender(message)
        // The bus names the sender of every message it passes on: only libdbus's own messages,
        // such as this one, have none, and only they are worth comparing with it.
        if type == MessageTypeCode.signal, sender == nil,
            dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0
        {
            shutDown(reason: DBusError(name: DBusError.disconnected, message: "the bus connection was lost"))
            mustReleaseLibdbus = true
            return DBUS_HANDLER_RESULT_HANDLED
        }
        guard type == MessageTypeCode.signal || type == MessageTypeCode.methodCall else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        var claims = SignalClaims()
        if type == MessageTypeCode.signal, claimingSubscriptions > 0 {
            claims = offerToClaims(message, sender: sender)
            if claims.takeWholeSignal { return DBUS_HANDLER_RESULT_HANDLED }
        }
        let decoded: DBusMessage
        do {
            decoded = try MessageCodec.decode(message, cache: &decodeCache)
        } catch {
            undecodableMessages += 1
            if type == MessageTypeCode.methodCall, dbus_message_get_no_reply(message) == 0 {
                replyToUndecodable(message, error: error)
            }
            return DBUS_HANDLER_RESULT_HANDLED
        }
        if type == MessageTypeCode.signal {
            deliverSignal(decoded, claimedBy: claims)
        } else {
            handleMethodCall(decoded)
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }

    private func replyToUndecodable(_ message: OpaquePointer, error: any Error) {
        var reply = DBusMessage(kind: .error, body: [.string("cannot decode the call: \(error)")])
        reply.errorName = DBusError.invalidArgs
        reply.replySerial = dbus_message_get_serial(message)
        reply.destination = dbus_message_get_sender(message).map { String(cString: $0) }
        try? send(reply)
    }

    // MARK: - Sending

    func nextIdentifier() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Sends a message without waiting for a reply (signals, replies, no-reply calls).
    public func send(_ message: DBusMessage) throws {
        guard isOpen else { throw DBusError(name: DBusError.disconnected, message: "connection is closed") }
        let encoded = try MessageCodec.encode(message)
        defer { dbus_message_unref(encoded) }
        guard dbus_connection_send(raw, encoded, nil) != 0 else {
            throw DBusError(name: DBusError.noMemory, message: "cannot queue the message")
        }
    }

    /// Calls a method and waits for its reply, at most `timeout`.
    ///
    /// Throws `DBusError` for an error reply (its name and text as the peer sent them), for a
    /// timeout (`org.freedesktop.DBus.Error.NoReply`), or when the connection is lost;
    /// `CancellationError` when the calling task is cancelled; `DBusValidationError` for invalid
    /// names. A peer that disconnects without replying fails the call at once (the bus sends
    /// `NoReply` for it).
    public func call(_ message: DBusMessage, timeout: Duration = DBusConnection.defaultTimeout) async throws -> DBusMessage {
        guard message.kind == .methodCall else {
            throw DBusError(name: DBusError.invalidArgs, message: "call() sends method calls only")
        }
        guard isOpen else { throw DBusError(name: DBusError.disconnected, message: "connection is closed") }
        let encoded = try MessageCodec.encode(message)
        defer { dbus_message_unref(encoded) }
        let milliseconds = Int32(clamping: max(1, timeout.nanosecondsValue / 1_000_000))
        var pendingOut: OpaquePointer?
        guard dbus_connection_send_with_reply(raw, encoded, &pendingOut, milliseconds) != 0, let pending = pendingOut else {
            throw DBusError(name: DBusError.disconnected, message: "cannot send: the connection is closed")
        }
        let id = nextIdentifier()
        return try await withTaskCancellationHandler(
            operation: {
                try await withCheckedThrowingContinuation(isolation: self) { continuation in
                    if Task.isCancelled {
                        dbus_pending_call_cancel(pending)
                        dbus_pending_call_unref(pending)
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    pendingCalls[id] = PendingCall(pending: pending, continuation: continuation)
                    let context = Unmanaged.passRetained(PendingCallContext(connection: self, id: id)).toOpaque()
                    dbus_pending_call_set_notify(pending, pendingCallNotify, context, releasePendingCallContext)
                }
            },
            onCancel: {
                Task { await self.cancelCall(id) }
            },
            isolation: self)
    }

    /// Calls a method by its parts; see `call(_:timeout:)`.
    public func call(
        destination: String, path: DBusObjectPath, interface: String, member: String,
        _ body: [DBusValue] = [], timeout: Duration = DBusConnection.defaultTimeout, autoStart: Bool = true
    ) async throws -> [DBusValue] {
        let reply = try await call(
            .methodCall(destination: destination, path: path, interface: interface, member: member, body: body, autoStart: autoStart),
            timeout: timeout)
        return reply.body
    }

    func completeCall(_ id: UInt64) {
        // Signals that arrived before this reply reach their streams before the caller resumes.
        flushSignals()
        guard let call = pendingCalls.removeValue(forKey: id) else { return }
        defer { dbus_pending_call_unref(call.pending) }
        guard let reply = dbus_pending_call_steal_reply(call.pending) else {
            call.continuation.resume(throwing: DBusError(name: DBusError.noReply, message: "no reply"))
            return
        }
        defer { dbus_message_unref(reply) }
        do {
            let message = try MessageCodec.decode(reply, cache: &decodeCache)
            if let error = message.error {
                call.continuation.resume(throwing: error)
            } else {
                call.continuation.resume(returning: message)
            }
        } catch {
            call.continuation.resume(throwing: error)
        }
    }

    func cancelCall(_ id: UInt64) {
        guard let call = pendingCalls.removeValue(forKey: id) else { return }
        dbus_pending_call_cancel(call.pending)
        dbus_pending_call_unref(call.pending)
        call.continuation.resume(throwing: CancellationError())
    }
}

/// A call waiting for its reply.
struct PendingCall {
    let pending: OpaquePointer
    let continuation: CheckedContinuation<DBusMessage, any Error>
}

/// What libdbus hands back to `pendingCallNotify`.
final class PendingCallContext {
    let connection: DBusConnection
    let id: UInt64
    init(connection: DBusConnection, id: UInt64) {
        self.connection = connection
        self.id = id
    }
}

extension Duration {
    var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
