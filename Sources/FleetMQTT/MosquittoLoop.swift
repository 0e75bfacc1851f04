import CMosquitto
import Fleet
import FleetCore
import Glibc
import Logging

/// libmosquitto is initialised once per process (`mosquitto_lib_init` is not thread-safe; a
/// global's initialiser runs exactly once).
private let libraryInitialised: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

/// The `mqtt` thread's side of an `MQTTClient`: the libmosquitto handle and the connection's
/// state, confined to that thread (created on it, never handed out). libmosquitto's callbacks
/// run inside `mosquitto_loop_read/write/misc`, on this thread, and reach the loop through the
/// handle's user data.
final class MosquittoLoop {
    private enum Phase {
        /// No socket; the next attempt is due at the instant.
        case waiting(until: MonotonicInstant)
        /// Socket open and CONNECT sent; CONNACK due before the instant.
        case handshaking(deadline: MonotonicInstant)
        case connected
    }

    private let context: MQTTLoopContext
    private var schedule: MQTTReconnectSchedule
    private var random: SeededRandom
    private var phase: Phase
    private var attempts = 0
    private var mosq: OpaquePointer?
    private var logger: Logger { context.logger }
    private var client: MQTTClient { context.client }
    /// A loss already reported for the current connection (libmosquitto's on_disconnect and a
    /// failing loop call both report the same loss).
    private var lossHandled = true
    /// The last flush handed values over: the next sleep lingers (see `MQTTClient.valueLinger`).
    private var valuesFlowing = false
    /// Renders the values taken from the client's queue (nil: the client takes none).
    private var renderer: MQTTValueRenderer?
    /// Reused per flush: the values taken and the messages they become.
    private var valueBatch: [ValuePipeline.Value] = []
    private var valueMessages: [MQTTMessage] = []
    /// The retained `…/latest` copies a render made, on their way to the outbox.
    private var latestCopies: [MQTTValueRenderer.LatestCopy] = []
    /// The password last handed to libmosquitto (re-read from its file before each attempt).
    private var password: String?
    private var warnedPasswordFileMode = false
    private var warnedPasswordUnreadable = false
    /// The QoS 1 and 2 messages handed to libmosquitto that the broker has not acknowledged yet,
    /// by message id. libmosquitto keeps at most its in-flight window (20) on the wire and holds
    /// the rest until PUBACKs free the window; a clean stop waits for this to empty before
    /// DISCONNECT, or the messages held back are lost (`closeCleanly`). Kept across a lost
    /// connection: libmosquitto sends them again on the next one, with the same ids. (QoS 0
    /// messages draw ids from the same 16-bit counter and their publish callback removes theirs:
    /// one could remove a QoS 1 id still waiting only after 65,535 publishes while it waits.)
    private var unacknowledged: Set<Int32> = []

    init(_ context: MQTTLoopContext) {
        self.context = context
        renderer = context.values.map(MQTTValueRenderer.init(route:))
        schedule = context.schedule
        random = context.random
        phase = .waiting(until: context.clock.now())
    }

    // MARK: - Run

    func run() {
        defer {
            if let mosq { mosquitto_destroy(mosq) }
            client.counters.setConnected(false)
            context.events.finish()
            client.loopEnded()
        }
        guard libraryInitialised, let handle = makeHandle() else {
            logger.error("mqtt: libmosquitto could not be set up", metadata: ["event": "mqtt_setup_failed"])
            waitForStop()
            return
        }
        mosq = handle
        while true {
            let stopping = client.shared.withLock { $0.stopRequested }
            if stopping { break }
            let now = context.clock.now()
            switch phase {
            case .waiting(let due) where now >= due: attemptConnection(handle, now: now)
            case .handshaking(let deadline) where now >= deadline:
                logger.warning("mqtt: the broker did not answer CONNECT in time", metadata: ["event": "mqtt_connect_timeout"])
                mosquitto_disconnect(handle)
                lost(handle, "no CONNACK in time")
            case .connected: flush(handle)
            default: break
            }
            pollOnce(handle)
        }
        closeCleanly(handle)
    }

    private func makeHandle() -> OpaquePointer? {
        let settings = context.settings
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard let handle = mosquitto_new(settings.clientID, true, user) else { return nil }
        let version = settings.protocolVersion == .v5 ? wearfleet_mqtt_protocol_v5 : wearfleet_mqtt_protocol_v311
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version)
        mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        if let will = settings.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
            }
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failSetup(handle, "will", rc) }
        }
        password = settings.password
        if let username = settings.username {
            let rc = mosquitto_username_pw_set(handle, username, settings.password)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failSetup(handle, "username", rc) }
        }
        if settings.tls {
            // Without a CA file, the system's trust store (OpenSSL's default paths).
            let rc = settings.caFile == nil
                ? mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
                : mosquitto_tls_set(handle, settings.caFile, nil, settings.certFile, settings.keyFile, nil)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failSetup(handle, "TLS", rc) }
            if settings.caFile == nil, settings.certFile != nil {
                let rc = mosquitto_tls_set(handle, nil, "/etc/ssl/certs", settings.certFile, settings.keyFile, nil)
                guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failSetup(handle, "TLS", rc) }
            }
        }
        mosquitto_connect_callback_set(handle) { _, user, rc in
            guard let user else { return }
            Unmanaged<MosquittoLoop>.fromOpaque(user).takeUnretainedValue().connectAnswered(rc)
        }
        mosquitto_disconnect_callback_set(handle) { _, user, rc in
            guard let user else { return }
            Unmanaged<MosquittoLoop>.fromOpaque(user).takeUnretainedValue().disconnected(rc)
        }
        mosquitto_publish_callback_set(handle) { _, user, messageID in
            guard let user else { return }
            Unmanaged<MosquittoLoop>.fromOpaque(user).takeUnretainedValue().unacknowledged.remove(messageID)
        }
        mosquitto_message_callback_set(handle) { _, user, message in
            guard let user, let message else { return }
            Unmanaged<MosquittoLoop>.fromOpaque(user).takeUnretainedValue().received(message.pointee)
        }
        return handle
    }

    private func failSetup(_ handle: OpaquePointer, _ what: String, _ rc: Int32) -> OpaquePointer? {
        logger.error("mqtt: \(what) settings refused: \(describe(rc))", metadata: ["event": "mqtt_setup_failed"])
        mosquitto_destroy(handle)
        return nil
    }

    // MARK: - Connecting

    private func attemptConnection(_ handle: OpaquePointer, now: MonotonicInstant) {
        attempts += 1
        if attempts > 1 { client.counters.addReconnect() }
        let settings = context.settings
        refreshPassword(handle)
        // Blocking: name resolution, TCP connect and the TLS handshake run here, on this thread
        // only. libmosquitto then sets the socket non-blocking.
        let rc = mosquitto_connect(handle, settings.host, Int32(settings.port), settings.keepAlive)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            let due = schedule.failed(at: context.clock.now(), random: &random)
            phase = .waiting(until: due)
            let reason = rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : describe(rc)
            logger.warning(
                "mqtt: cannot reach the broker at \(settings.host):\(settings.port): \(reason); next attempt in \(due.duration(since: context.clock.now()))",
                metadata: ["event": "mqtt_connect_failed", "attempt": "\(schedule.failures)"])
            context.events.yield(.disconnected(reason))
            return
        }
        lossHandled = false
        phase = .handshaking(deadline: context.clock.now().advanced(by: .seconds(Int64(max(settings.keepAlive, 10)))))
    }

    /// Reads the password file again (it may have been rotated) and hands a changed password to
    /// libmosquitto; while the file cannot be read the last password stands (logged once).
    private func refreshPassword(_ handle: OpaquePointer) {
        let settings = context.settings
        guard let path = settings.passwordFile, let username = settings.username else { return }
        guard let file = MQTTPasswordFile.read(path) else {
            if !warnedPasswordUnreadable {
                warnedPasswordUnreadable = true
                logger.warning(
                    "mqtt: cannot read the password file \(path): \(String(cString: strerror(errno))); using the password read before",
                    metadata: ["event": "mqtt_password_unreadable"])
            }
            return
        }
        warnedPasswordUnreadable = false
        if settings.checkPasswordFileMode, file.readableByOthers, !warnedPasswordFileMode {
            warnedPasswordFileMode = true
            logger.warning(
                "mqtt: the password file \(path) is readable by its group or others; make it 0600 (or use LoadCredential=)",
                metadata: ["event": "mqtt_password_file_mode"])
        }
        guard file.password != password else { return }
        let rc = mosquitto_username_pw_set(handle, username, file.password)
        if rc == MOSQ_ERR_SUCCESS.rawValue {
            password = file.password
        } else {
            logger.error("mqtt: the new password was refused: \(describe(rc))", metadata: ["event": "mqtt_setup_failed"])
        }
    }

    /// CONNACK arrived (on_connect).
    private func connectAnswered(_ rc: Int32) {
        guard let mosq else { return }
        guard rc == 0 else {
            let reason = String(cString: context.settings.protocolVersion == .v5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc))
            logger.error("mqtt: the broker refused the connection: \(reason)", metadata: ["event": "mqtt_refused"])
            mosquitto_disconnect(mosq)
            lost(mosq, "refused: \(reason)")
            return
        }
        phase = .connected
        schedule.connected()
        client.counters.setConnected(true)
        client.shared.withLock { $0.connected = true }
        for filter in context.settings.subscriptions {
            let rc = mosquitto_subscribe(mosq, nil, filter, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                logger.error("mqtt: subscribing to \(filter) failed: \(describe(rc))", metadata: ["event": "mqtt_subscribe_failed"])
            }
        }
        // The broker may have lost what it retained (restarted without persistence): publish it again.
        client.shared.withLock { $0.outbox.requeueRetained() }
        logger.notice(
            "mqtt: connected to \(context.settings.host):\(context.settings.port)", metadata: ["event": "mqtt_connected"])
        context.events.yield(.connected)
    }

    /// The connection ended (on_disconnect): a loss unless it was our own DISCONNECT.
    private func disconnected(_ rc: Int32) {
        guard let mosq, !lossHandled else { return }
        lost(mosq, rc == 0 ? "disconnected" : describe(rc))
    }

    private func lost(_ handle: OpaquePointer, _ reason: String) {
        guard !lossHandled else { return }
        lossHandled = true
        let wasConnected = if case .connected = phase { true } else { false }
        client.counters.setConnected(false)
        client.shared.withLock { $0.connected = false }
        let due = schedule.failed(at: context.clock.now(), random: &random)
        phase = .waiting(until: due)
        if wasConnected {
            logger.warning(
                "mqtt: lost the broker: \(reason); reconnecting in \(due.duration(since: context.clock.now()))",
                metadata: ["event": "mqtt_lost"])
        }
        context.events.yield(.disconnected(reason))
    }

    private func received(_ message: mosquitto_message) {
        guard let topic = message.topic else { return }
        let length = Int(max(message.payloadlen, 0))
        let payload: [UInt8] = if let bytes = message.payload, length > 0 {
            Array(UnsafeRawBufferPointer(start: bytes, count: length))
        } else { [] }
        let name = String(cString: topic)
        if case .dropped(let oldest) = context.events.yield(.message(topic: name, payload: payload)) {
            // The bridge fell 1024 events behind (it hands commands to their device's lane at
            // once, so only a starved process gets here): the oldest is gone, counted, and
            // answered when it was a command.
            client.counters.addDropped(1)
            guard case .message(let droppedTopic, let droppedPayload) = oldest else { return }
            logger.warning(
                "mqtt: a message from the broker on \(droppedTopic) was dropped: 1024 wait for the bridge",
                metadata: ["event": "mqtt_received_dropped"])
            client.messageDropped(topic: droppedTopic, payload: droppedPayload)
        }
    }

    // MARK: - Publishing

    /// Hands what waits to libmosquitto while its socket keeps up; what it cannot take yet stays
    /// in the bounded queues (libmosquitto's own queue is unbounded). Messages first (retained
    /// state before the values that follow it, command results), then the values, rendered here.
    private func flush(_ handle: OpaquePointer) {
        guard !mosquitto_want_write(handle) else { return }
        let messages = client.shared.withLock { state -> [MQTTMessage] in
            let taken = state.outbox.isEmpty ? [] : state.outbox.takeAll()
            state.handingOver = taken.count
            return taken
        }
        valuesFlowing = messages.contains { !$0.retain && $0.qos == 0 }
        var published = 0
        var refused = 0
        var deletionsAccepted: [MQTTMessage] = []
        // Counted before `handingOver` is cleared: whoever sees nothing waiting sees them counted.
        func handedOver() {
            client.counters.addPublished(published)
            client.counters.addDropped(refused)
            published = 0
            refused = 0
            client.shared.withLock { state in
                for deletion in deletionsAccepted { state.outbox.accepted(deletion) }
                state.handingOver = 0
            }
            deletionsAccepted.removeAll()
        }
        for (index, message) in messages.enumerated() {
            if index > 0, mosquitto_want_write(handle) {
                // The socket is full: the rest goes back ahead of what came since, except a
                // retained message whose topic got a newer one (state or deletion) meanwhile.
                refused += client.shared.withLock { state in state.outbox.putBack(messages[index...]) }
                handedOver()
                return
            }
            let rc = publishing(handle, message)
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                published += 1
                if message.retain, message.payload.isEmpty { deletionsAccepted.append(message) }
            } else if message.retain {
                // Kept in the outbox's retained set (deletions too, until one is accepted): the
                // next connection publishes it again.
                client.counters.addRetainedFailure()
                logger.warning(
                    "mqtt: publishing retained \(message.topic) failed: \(describe(rc)); it is published again on the next connection",
                    metadata: ["event": "mqtt_retained_failed"])
            } else {
                refused += 1
            }
        }
        if !messages.isEmpty { handedOver() }
        guard renderer != nil, !mosquitto_want_write(handle) else { return }
        client.shared.withLock { state in
            state.values.takeAll(into: &valueBatch)
            state.handingOver = valueBatch.count
        }
        guard !valueBatch.isEmpty else { return }
        defer { handedOver() }
        valuesFlowing = true
        renderer?.render(valueBatch, into: &valueMessages, retained: &latestCopies)
        if !latestCopies.isEmpty {
            // Into the outbox's retained set, sent by the next pass (one message per value stays
            // here, so that a message's position is its value's when the socket fills).
            let route = renderer?.route
            client.shared.withLock { state in
                for copy in latestCopies where route?.describes(copy.device) ?? false { _ = state.outbox.enqueue(copy.message) }
            }
            latestCopies.removeAll(keepingCapacity: true)
        }
        // libmosquitto writes each message as it is published and the socket has TCP_NODELAY
        // (a lone message leaves at once): corked for the batch, its messages share segments,
        // and uncorking sends them at once (NOTES.md, "MQTT: what a value costs").
        let cork = valueMessages.count > 1 ? mosquitto_socket(handle) : -1
        if cork >= 0 { setCork(cork, true) }
        defer { if cork >= 0 { setCork(cork, false) } }
        for (index, message) in valueMessages.enumerated() {
            if index > 0, mosquitto_want_write(handle) {
                // The socket is full: the values not sent go back ahead of those that came since.
                let rest = valueBatch[index...]
                refused += client.shared.withLock { state in state.values.putBack(rest) }
                break
            }
            if publish(handle, message) { published += 1 } else { refused += 1 }
        }
        valueBatch.removeAll(keepingCapacity: true)
        valueMessages.removeAll(keepingCapacity: true)
    }

    private func setCork(_ socket: Int32, _ on: Bool) {
        var flag: Int32 = on ? 1 : 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &flag, socklen_t(MemoryLayout<Int32>.size))
    }

    private func publish(_ handle: OpaquePointer, _ message: MQTTMessage) -> Bool {
        publishing(handle, message) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// `mosquitto_publish`'s result code.
    private func publishing(_ handle: OpaquePointer, _ message: MQTTMessage) -> Int32 {
        var messageID: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &messageID, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, message.qos > 0 { unacknowledged.insert(messageID) }
        return rc
    }

    // MARK: - Polling

    private func pollOnce(_ handle: OpaquePointer) {
        let socket = mosquitto_socket(handle)
        var fds = [pollfd(fd: client.wakeFD, events: Int16(POLLIN), revents: 0)]
        if socket >= 0 {
            var events = Int16(POLLIN)
            if mosquitto_want_write(handle) { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: socket, events: events, revents: 0))
        }
        var timeout = pollTimeout()
        let linger = isConnected && valuesFlowing
        if linger { timeout = min(timeout, Int32(MQTTClient.valueLinger.components.attoseconds / 1_000_000_000_000_000)) }
        let mayWait = client.shared.withLock { state -> Bool in
            // Urgent messages (retained, QoS 1) waiting: no sleep. Only values waiting while
            // lingering: sleep out the linger, they go with the next ones.
            let waiting = !state.outbox.isEmpty || (renderer != nil && !state.values.isEmpty)
            let waitingUrgent = waiting && (!linger || state.outbox.retainedWaitingCount > 0 || state.outbox.urgentWaiting > 0)
            let ready = state.stopRequested || (isConnected && waitingUrgent && !mosquitto_want_write(handle))
            state.sleeping = !ready
            state.lingering = !ready && linger
            return !ready
        }
        let ready = poll(&fds, nfds_t(fds.count), mayWait ? timeout : 0)
        client.shared.withLock { state in
            state.sleeping = false
            state.lingering = false
        }
        if ready > 0, fds[0].revents != 0 {
            var value: UInt64 = 0
            _ = Glibc.read(client.wakeFD, &value, 8)
        }
        guard socket >= 0 else { return }
        if ready > 0, fds.count > 1 {
            let revents = fds[1].revents
            if revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                let rc = mosquitto_loop_read(handle, 1)
                if rc != MOSQ_ERR_SUCCESS.rawValue { lost(handle, describe(rc)); return }
            }
            if revents & Int16(POLLOUT) != 0, mosquitto_socket(handle) >= 0 {
                let rc = mosquitto_loop_write(handle, 1)
                if rc != MOSQ_ERR_SUCCESS.rawValue { lost(handle, describe(rc)); return }
            }
        }
        if mosquitto_socket(handle) >= 0 {
            let rc = mosquitto_loop_misc(handle)
            if rc != MOSQ_ERR_SUCCESS.rawValue { lost(handle, describe(rc)) }
        } else if !lossHandled {
            lost(handle, "connection closed")
        }
    }

    private var isConnected: Bool { if case .connected = phase { true } else { false } }

    /// Milliseconds until something is due: the next attempt, the CONNACK deadline, or a
    /// keepalive check (libmosquitto's `loop_misc` sends PINGREQ) at least once a second.
    private func pollTimeout() -> Int32 {
        let now = context.clock.now()
        let until: MonotonicInstant
        switch phase {
        case .waiting(let due): until = due
        case .handshaking(let deadline): until = min(deadline, now.advanced(by: .seconds(1)))
        case .connected: until = now.advanced(by: .seconds(1))
        }
        let nanoseconds = until.duration(since: now).nanosecondsForPoll
        return Int32(clamping: max(0, (nanoseconds + 999_999) / 1_000_000))
    }

    // MARK: - Stopping

    /// Hands over what waits and waits for the broker to acknowledge it (`drain`, at most 3 s),
    /// publishes the final message and waits for its acknowledgement (at least 1 s more), then
    /// DISCONNECTs, waiting at most 3 s for the bytes to leave. A connection closed before
    /// DISCONNECT went out makes the broker publish the Will over the final message (2 s was seen
    /// to run out once on two loaded cores). If the broker has not acknowledged everything by
    /// then, the final message may still be held behind libmosquitto's in-flight window, where
    /// DISCONNECT would lose it and suppress the Will: the socket is closed without DISCONNECT
    /// instead (by `mosquitto_destroy`), so the broker publishes the Will — the same `offline`.
    /// Stopped while CONNECT is out (a blocking connect returned after the stop): DISCONNECT
    /// only, so the broker neither publishes the Will nor keeps a session for the client id.
    /// At most 7 s in all, within `stop`'s 5 s and its grace for a closing connection (4 s),
    /// leaving the fleet's own stop its time before systemd's `TimeoutStopSec`.
    private func closeCleanly(_ handle: OpaquePointer) {
        let handshaking = if case .handshaking = phase { true } else { false }
        guard isConnected || handshaking else { return }
        // The client is stopping: a loss from here on is reported here, not as one to reconnect after.
        lossHandled = true
        client.shared.withLock { $0.closing = true }
        if isConnected {
            let start = context.clock.now()
            var drained = drain(handle, until: start.advanced(by: .seconds(3)))
            if drained != .lost, let final = client.shared.withLock({ $0.finalMessage }) {
                _ = publishing(handle, final)
                drained = drain(handle, until: max(start.advanced(by: .seconds(3)), context.clock.now().advanced(by: .seconds(1))))
            }
            switch drained {
            case .acknowledged: break
            case .lost:
                logger.warning(
                    "mqtt: the connection broke while stopping; \(unacknowledged.count) messages may not have reached the broker",
                    metadata: ["event": "mqtt_stop_lost"])
                return
            case .unacknowledged:
                logger.warning(
                    "mqtt: stopping with \(unacknowledged.count) messages the broker has not acknowledged; closing without DISCONNECT, so the broker publishes the Will",
                    metadata: ["event": "mqtt_stop_unacknowledged"])
                return
            }
        }
        mosquitto_disconnect(handle)
        // Written, DISCONNECT makes libmosquitto close the socket.
        let deadline = context.clock.now().advanced(by: .seconds(3))
        while context.clock.now() < deadline, exchange(handle, until: deadline) {}
        client.counters.setConnected(false)
    }

    private enum Drained { case acknowledged, unacknowledged, lost }

    /// Flushes until nothing waits in the client's queues and the broker has acknowledged every
    /// QoS 1 message, or `deadline` passes, or the connection is lost. DISCONNECT straight after a
    /// burst (a reload forgetting a device empties 17 retained topics, then its connection
    /// ends) lost everything past libmosquitto's in-flight window, the final `offline` too: 20 of
    /// 121 messages reached the broker (NOTES.md, "A clean stop after a burst").
    private func drain(_ handle: OpaquePointer, until deadline: MonotonicInstant) -> Drained {
        while true {
            flush(handle)
            let waiting = client.shared.withLock { state in
                !state.outbox.isEmpty || (renderer != nil && !state.values.isEmpty)
            }
            // Bytes libmosquitto still has to write are not waited for here: DISCONNECT's own
            // wait writes them (and with TLS `want_write` can stay set with nothing to write).
            if !waiting, unacknowledged.isEmpty { return .acknowledged }
            guard context.clock.now() < deadline else { return .unacknowledged }
            guard exchange(handle, until: deadline) else { return .lost }
        }
    }

    /// Waits for the socket at most 100 ms (and not past `deadline`), then reads and writes what
    /// it is ready for. False once the socket is closed or a read or write failed.
    private func exchange(_ handle: OpaquePointer, until deadline: MonotonicInstant) -> Bool {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return false }
        let remaining = deadline.duration(since: context.clock.now()).nanosecondsForPoll
        let milliseconds = Int32(clamping: min(100, max(0, (remaining + 999_999) / 1_000_000)))
        var fds = [pollfd(fd: socket, events: Int16(POLLIN | (mosquitto_want_write(handle) ? POLLOUT : 0)), revents: 0)]
        // Interrupted: nothing read or written, the caller's deadline still bounds the wait.
        guard poll(&fds, 1, milliseconds) >= 0 else { return true }
        if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0, mosquitto_loop_read(handle, 1) != MOSQ_ERR_SUCCESS.rawValue {
            return false
        }
        if fds[0].revents & Int16(POLLOUT) != 0, mosquitto_socket(handle) >= 0, mosquitto_loop_write(handle, 1) != MOSQ_ERR_SUCCESS.rawValue {
            return false
        }
        return mosquitto_socket(handle) >= 0
    }

    /// libmosquitto could not be set up: the client does nothing until it is stopped.
    private func waitForStop() {
        while !client.shared.withLock({ $0.stopRequested }) {
            var fds = [pollfd(fd: client.wakeFD, events: Int16(POLLIN), revents: 0)]
            client.shared.withLock { $0.sleeping = true }
            _ = poll(&fds, 1, -1)
            client.shared.withLock { $0.sleeping = false }
            var value: UInt64 = 0
            _ = Glibc.read(client.wakeFD, &value, 8)
        }
    }

    private func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }
}

extension Duration {
    /// Whole nanoseconds, saturating (a poll timeout never needs more than Int64).
    fileprivate var nanosecondsForPoll: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
