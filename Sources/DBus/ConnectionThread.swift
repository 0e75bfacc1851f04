import CDBus
import DetachedThread
import Glibc
import Synchronization

// One thread per connection owns the libdbus connection and runs a poll() loop over libdbus's
// watches and timeouts plus an eventfd for wake-ups. The thread is also a `SerialExecutor`:
// the `DBusConnection` actor runs on it, so actor methods call libdbus synchronously and
// libdbus's C callbacks (which run on this thread) reach actor state with `assumeIsolated`.
// Nothing else ever touches the libdbus connection, so no libdbus locking is relied upon.

/// The thread and executor of one D-Bus connection.
///
/// `@unchecked Sendable` is sound here because every mutable field is either
/// - inside `shared` (a `Mutex`): the job queue and the stop flag, touched from any thread; or
/// - confined to the loop thread: `watches`, `timeouts`, the hooks (`dispatcher`,
///   `beforeSleeping`, `hasSignalsToHandOver`) and `pollSetIsCurrent` are only read or written by
///   code that runs on the loop thread (the loop itself, jobs it runs, and libdbus callbacks it
///   triggers), which `checkIsolated()` enforces in debug paths;
/// - `threadID` is written once by the loop thread before it runs any job, and only compared
///   by `isOnLoopThread`, which is meaningful only when called from that same thread.
final class ConnectionThread: SerialExecutor, @unchecked Sendable {
    private enum Work: Sendable {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Shared {
        var work: [Work] = []
        var stopRequested = false
        var sleeping = false
    }

    private let shared = Mutex(Shared())
    private let wakeFD: Int32
    private var threadID = pthread_t()
    private var threadStarted = false

    /// libdbus watches and timeouts registered by the connection (loop thread only).
    private var watches: [OpaquePointer] = []
    private var timeouts: [OpaquePointer: Int64] = [:]  // timeout → deadline (ns, CLOCK_MONOTONIC)

    /// Called each iteration to dispatch queued incoming messages (loop thread only).
    var dispatcher: (() -> Void)?
    /// Called when the loop is about to sleep with signals to hand over (`hasSignalsToHandOver`):
    /// nothing is left to read or run (loop thread only).
    var beforeSleeping: (() -> Void)?
    /// Set while the connection holds matched signals that `beforeSleeping` would hand over
    /// (loop thread only). Without any, the loop sleeps in poll() at once, instead of looking
    /// first: one poll() per wake-up rather than two.
    var hasSignalsToHandOver = false
    /// False once a watch came, went or was toggled (`watchesChanged`): the loop then rebuilds
    /// its poll set before the next poll, not on every wake-up.
    private var pollSetIsCurrent = false

    init(name: String) throws {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else {
            throw DBusError(name: DBusError.failed, message: "eventfd failed: errno \(errno)")
        }
        wakeFD = fd
        try start(name: name)
    }

    deinit {
        Glibc.close(wakeFD)
    }

    // MARK: - SerialExecutor

    func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(isOnLoopThread, "not on the D-Bus connection thread")
    }

    var isOnLoopThread: Bool {
        threadStarted && pthread_equal(pthread_self(), threadID) != 0
    }

    /// Runs `work` on the loop thread, outside of any actor job (used for setup and teardown).
    func perform(_ work: @escaping @Sendable () -> Void) {
        submit(.closure(work))
    }

    /// Forgets libdbus's watches and timeouts once the connection is closed. The thread keeps
    /// running jobs, because the actor that uses it as executor may still be called (and must
    /// answer "disconnected" rather than hang) until it is released.
    func forgetLibdbus() {
        watches.removeAll()
        timeouts.removeAll()
        dispatcher = nil
        beforeSleeping = nil
    }

    /// Ends the thread: it runs the work already queued, then exits. Called when the actor that
    /// uses this executor is released, so no job can arrive afterwards.
    func terminate() {
        shared.withLock { $0.stopRequested = true }
        wake()
    }

    private func submit(_ work: Work) {
        let mustWake = shared.withLock { state -> Bool in
            state.work.append(work)
            return state.sleeping
        }
        // The loop only sleeps in poll(); when it is awake it sees the queue before sleeping.
        if mustWake { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: - Thread

    private func start(name: String) throws {
        do {
            try DetachedThread.start(name: name) { [self] in self.run() }
        } catch {
            throw DBusError(name: DBusError.failed, message: "\(error)")
        }
    }

    /// poll()'s set and the watches it covers. Local to the loop rather than the thread's
    /// properties, which would be checked for exclusivity at run time on every access (figures:
    /// NOTES.md, "Hidden reference counting and exclusivity checks").
    private struct PollSet {
        var fds: [pollfd] = []
        var watches: [OpaquePointer] = []
    }

    private func run() {
        threadID = pthread_self()
        threadStarted = true
        var pollSet = PollSet()
        while true {
            let (batch, stopping) = shared.withLock { state -> ([Work], Bool) in
                // Nearly every round has no work: hand back the shared empty array, rather than
                // copying the queue and reallocating its buffer.
                guard !state.work.isEmpty else { return ([], state.stopRequested) }
                var batch: [Work] = []
                swap(&batch, &state.work)
                return (batch, state.stopRequested)
            }
            for work in batch {
                switch work {
                case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
                case .closure(let closure): closure()
                }
            }
            if stopping && batch.isEmpty { break }
            dispatcher?()
            pollOnce(&pollSet)
        }
        dispatcher = nil
        beforeSleeping = nil
    }

    /// Makes `pollSet` cover the wake-up eventfd and every enabled watch. A watch's flags are
    /// fixed when libdbus makes it; only its enabled state changes, and libdbus reports that
    /// (`watchesChanged`).
    private func rebuildPollSet(_ pollSet: inout PollSet) {
        pollSet.fds.removeAll(keepingCapacity: true)
        pollSet.watches.removeAll(keepingCapacity: true)
        pollSet.fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { events |= Int16(POLLIN) }
            if flags & UInt32(DBUS_WATCH_WRITABLE.rawValue) != 0 { events |= Int16(POLLOUT) }
            pollSet.fds.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
            pollSet.watches.append(watch)
        }
        pollSetIsCurrent = true
    }

    private func pollOnce(_ pollSet: inout PollSet) {
        if !pollSetIsCurrent { rebuildPollSet(&pollSet) }
        var timeoutMs: Int32 = -1
        if !timeouts.isEmpty, let nearest = timeouts.values.min() {
            timeoutMs = Int32(clamping: max(0, (nearest - monotonicNanoseconds() + 999_999) / 1_000_000))
        }
        // Look first without sleeping: while input keeps coming, the loop goes on reading, and
        // only when it would sleep does it hand over what it gathered (see `beforeSleeping`).
        // With nothing gathered there is nothing to hold back, and no reason to look.
        var ready = timeoutMs == 0 || !hasSignalsToHandOver ? 0 : poll(&pollSet.fds, nfds_t(pollSet.fds.count), 0)
        if ready == 0 {
            // Nothing to hand over, nothing to call (the hook costs a closure call and a
            // reference count round trip per wake-up).
            if hasSignalsToHandOver { beforeSleeping?() }
            let mustNotSleep = shared.withLock { state -> Bool in
                if !state.work.isEmpty || state.stopRequested { return true }
                state.sleeping = true
                return false
            }
            if mustNotSleep { timeoutMs = 0 }
            ready = poll(&pollSet.fds, nfds_t(pollSet.fds.count), timeoutMs)
            shared.withLock { $0.sleeping = false }
        }
        if ready > 0 {
            if pollSet.fds[0].revents != 0 {
                var counter: UInt64 = 0
                _ = Glibc.read(wakeFD, &counter, 8)
            }
            for (index, watch) in pollSet.watches.enumerated() {
                let revents = pollSet.fds[index + 1].revents
                guard revents != 0 else { continue }
                // A callback run by an earlier watch may have removed or disabled this one.
                guard pollSetIsCurrent || watches.contains(watch) && dbus_watch_get_enabled(watch) != 0 else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= UInt32(DBUS_WATCH_READABLE.rawValue) }
                if revents & Int16(POLLOUT) != 0 { flags |= UInt32(DBUS_WATCH_WRITABLE.rawValue) }
                if revents & Int16(POLLERR) != 0 { flags |= UInt32(DBUS_WATCH_ERROR.rawValue) }
                if revents & Int16(POLLHUP) != 0 { flags |= UInt32(DBUS_WATCH_HANGUP.rawValue) }
                dbus_watch_handle(watch, flags)
            }
        }
        fireExpiredTimeouts()
    }

    private func fireExpiredTimeouts() {
        guard !timeouts.isEmpty else { return }
        let now = monotonicNanoseconds()
        let expired = timeouts.filter { $0.value <= now }.map(\.key)
        for timeout in expired {
            guard timeouts[timeout] != nil else { continue }
            // libdbus timeouts are periodic until removed or disabled.
            timeouts[timeout] = now + Self.intervalNanoseconds(timeout)
            dbus_timeout_handle(timeout)
        }
    }

    // MARK: - libdbus watch and timeout bookkeeping (called from C callbacks on the loop thread)

    func addWatch(_ watch: OpaquePointer) {
        watches.append(watch)
        pollSetIsCurrent = false
    }

    func removeWatch(_ watch: OpaquePointer) {
        watches.removeAll { $0 == watch }
        pollSetIsCurrent = false
    }

    /// A watch was enabled or disabled: the poll set is rebuilt before the next poll.
    func watchesChanged() {
        pollSetIsCurrent = false
    }

    func addTimeout(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] = monotonicNanoseconds() + Self.intervalNanoseconds(timeout)
        }
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        timeouts[timeout] = nil
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] = monotonicNanoseconds() + Self.intervalNanoseconds(timeout)
        } else {
            timeouts[timeout] = nil
        }
    }

    private static func intervalNanoseconds(_ timeout: OpaquePointer) -> Int64 {
        Int64(dbus_timeout_get_interval(timeout)) * 1_000_000
    }
}

func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
