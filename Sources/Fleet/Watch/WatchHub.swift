import CSocketSupport
import DetachedThread
import FleetCore
import FoundationEssentials
import Glibc
import Synchronization

/// The watch clients' sockets and the one thread that writes to them (`watch-write`).
///
/// Values come in inline on the ingest threads (a `ValuePipeline` tap, held only while at least
/// one client watches: nobody watching costs nothing) and state changes from the fleet's event
/// feed; both are queued here and taken by the writer thread in batches. The writer encodes a
/// value once (`LiveValueRecord`) for every client whose filter takes it and sends each client
/// its records, one per datagram, never blocking: what the client's socket cannot take waits in
/// the client's own queue of `WatchFilter.buffer` records, and when that is full the oldest
/// record is dropped and counted. Before the next record it gets, the client is told how many it
/// lost so far (`{"kind":"dropped","dropped":N,…}`). A client hanging up (or its socket failing)
/// is forgotten and its socket closed at once.
///
/// Batches, Nagle-like: a value that finds the writer idle is sent at once; once values flow,
/// the writer sleeps until `batchTarget` values wait or `linger` has passed since its last batch,
/// whichever comes first (the ingest side signals it only at `batchTarget`). A batch's cost is
/// mostly fixed — the writer's own wake-up, and the reader's, which the kernel charges to the
/// sender — so a busy fleet pays it once per up to `batchTarget` values rather than every few.
///
/// Guarantees: the ingest path never waits for a client, a client never waits for another, and
/// a value's records keep the order the values were received in.
public final class WatchHub: Sendable {
    /// What the fleet knows of a device, put into its records.
    public struct DeviceInfo: Sendable, Equatable {
        /// The journal's `SESSION_ID` of the device's latest session (`<run>-<session>`).
        public var session: String?
        public var name: String?
        public var adapter: AdapterID?

        public init(session: String? = nil, name: String? = nil, adapter: AdapterID? = nil) {
            self.session = session
            self.name = name
            self.adapter = adapter
        }
    }

    /// One client's counters, as the hub last saw them.
    public struct ClientStatistics: Sendable, Equatable {
        public var sent = 0
        public var dropped = 0
    }

    enum Item: Sendable {
        case value(ValuePipeline.Value)
        case state(DeviceID, [UInt8])
    }

    struct Registration: Sendable {
        let id: UInt64
        let fd: Int32
        let filter: WatchFilter
    }

    private struct Shared: Sendable {
        var pending: [Item] = []
        /// Items lost because the writer fell behind the ingest (every client is told).
        var lostBeforeWriter = 0
        var devices: [DeviceID: DeviceInfo] = [:]
        /// Bumped with every change of `devices`, so the writer's encoder looks a device up only
        /// when what the fleet knows of it may have changed.
        var devicesVersion: UInt64 = 0
        var joining: [Registration] = []
        var clients: [UInt64: ClientStatistics] = [:]
        var nextClient: UInt64 = 1
        var tap: UInt64?
        /// False while the writer waits without a timeout: the next item must wake it.
        var writerAwake = false
        /// While the writer sleeps, the pending count at which `enqueue` wakes it: 1 when it is
        /// idle; `batchTarget` while values flow (the linger's timeout wakes it otherwise); while
        /// every client's socket is full, the smallest client queue (nothing could be sent
        /// sooner; waking every few milliseconds only to move values into full queues cost a
        /// stalled client ~1 µs per value).
        var wakeAt = 1
        var stopping = false
    }

    /// Items waiting for the writer, at most (beyond it the oldest are dropped).
    static let pendingLimit = 65536
    /// The longest record a client is sent; a longer one is dropped and counted.
    public static let maximumRecordBytes = 65536

    private let shared = Mutex(Shared())
    /// The number of clients, each time it changes (newest kept).
    public let clientCounts: AsyncStream<Int>
    private let clientCountSink: AsyncStream<Int>.Continuation
    private let pipeline: ValuePipeline
    private let linger: Duration
    private let batchTarget: Int
    private let wakePipe: WakePipe

    /// Starts the writer thread (idle until a client comes).
    ///
    /// - Parameters:
    ///   - linger: the longest a value waits for others once values flow (a value that finds the
    ///     writer idle goes at once). 10 ms is well inside a BLE connection interval (7.5 ms to
    ///     4 s; wearables use 30–50 ms and more), so a reader sees no value later than the radio
    ///     already made it.
    ///   - batchTarget: the values that end the linger early: one `sendmmsg` call's worth.
    public init(pipeline: ValuePipeline, linger: Duration = .milliseconds(10), batchTarget: Int = 64) throws {
        wakePipe = try WakePipe()
        self.pipeline = pipeline
        self.linger = linger
        self.batchTarget = max(1, batchTarget)
        (clientCounts, clientCountSink) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(16))
        do {
            try DetachedThread.start(name: "watch-write") { [self] in self.run() }
        } catch {
            throw POSIXError(.init(rawValue: error.code) ?? .EAGAIN)
        }
    }

    // MARK: - Clients

    /// A new client: returns the client's end of a fresh SOCK_SEQPACKET pair (the caller passes
    /// it on and closes it) and the client's id.
    public func addClient(_ filter: WatchFilter) throws -> (socket: Int32, id: UInt64) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        let id = shared.withLock { shared -> UInt64?? in
            guard !shared.stopping else { return nil }
            guard shared.clients.count < Self.clientLimit else { return .some(nil) }
            let id = shared.nextClient
            shared.nextClient += 1
            shared.joining.append(Registration(id: id, fd: fds[0], filter: filter))
            shared.clients[id] = ClientStatistics()
            if shared.tap == nil {
                // Held strongly, as the writer thread holds the hub anyway until `stop`; the tap
                // goes when the last client does, or at `stop` (a weak reference would cost an
                // atomic load of its side table for every value).
                shared.tap = pipeline.tap { [self] value in enqueue(.value(value)) }
            }
            shared.writerAwake = true
            clientCountSink.yield(shared.clients.count)
            return id
        }
        guard let id, let id else {
            close(fds[0])
            close(fds[1])
            throw id == nil ? WatchHubError.stopping : WatchHubError.tooManyClients(limit: Self.clientLimit)
        }
        wakePipe.signal()
        return (fds[1], id)
    }

    /// The most clients that watch at once. Each holds a socket pair's daemon end and a queue of
    /// up to its `Buffer` records: a reader that opens watches without end would otherwise take
    /// every descriptor the daemon has (bluetoothd's notify and write sockets need them).
    public static let clientLimit = 64

    /// Whether the hub takes the pipeline's values now (only while a client watches).
    public var takesValues: Bool { shared.withLock { $0.tap != nil } }

    /// Clients watching now.
    public var clientCount: Int { shared.withLock { $0.clients.count } }

    /// Each client's counters by id (updated by the writer after each batch).
    public var statistics: [UInt64: ClientStatistics] { shared.withLock { $0.clients } }

    // MARK: - What the fleet reports

    /// Records what the fleet knows of `device` for its next records.
    public func update(_ device: DeviceID, _ change: (inout DeviceInfo) -> Void) {
        shared.withLock { shared in
            change(&shared.devices[device, default: DeviceInfo()])
            shared.devicesVersion &+= 1
        }
    }

    public func forget(_ device: DeviceID) {
        shared.withLock { shared in
            guard shared.devices.removeValue(forKey: device) != nil else { return }
            shared.devicesVersion &+= 1
        }
    }

    /// Queues a state change for the clients that take it (nothing when nobody watches).
    public func publish(_ record: LiveStateRecord) {
        guard shared.withLock({ !$0.clients.isEmpty }) else { return }
        enqueue(.state(record.device, record.jsonBytes()))
    }

    /// Records lost before they reached the hub (the fleet's event feed fell behind): counted
    /// with the writer's own losses, so every client's next `dropped` record includes them.
    public func reportLost(_ count: Int) {
        guard count > 0 else { return }
        shared.withLock { shared in
            guard !shared.clients.isEmpty else { return }
            shared.lostBeforeWriter += count
        }
    }

    /// Ends the thread; every client's socket is closed (clients read end of file).
    public func stop() {
        shared.withLock { shared in
            shared.stopping = true
            shared.writerAwake = true
        }
        wakePipe.signal()
    }

    private func enqueue(_ item: Item) {
        let wake = shared.withLock { shared -> Bool in
            guard !shared.clients.isEmpty else { return false }
            if shared.pending.count >= Self.pendingLimit {
                // The writer is that far behind: the oldest eighth goes at once, so a value costs
                // the ingest thread amortised O(1) here rather than a 64K-element shift each.
                let oldest = Self.pendingLimit / 8
                shared.pending.removeFirst(oldest)
                shared.lostBeforeWriter += oldest
            }
            shared.pending.append(item)
            guard !shared.writerAwake, shared.pending.count >= shared.wakeAt else { return false }
            shared.writerAwake = true
            return true
        }
        // Outside the lock: the writer wakes to take it at once, not to wait for this thread.
        if wake { wakePipe.signal() }
    }

    // MARK: - The writer thread

    private func run() {
        var clients: [Client] = []
        let encoder = LiveValueEncoder()
        var lostBefore = 0
        var pollFDs: [pollfd] = []
        let lingerMilliseconds = Int32(clamping: max(0, linger.components.seconds * 1000 + linger.components.attoseconds / 1_000_000_000_000_000))
        while true {
            // Take the batch: the pending array itself, handed to the batch's records, and a fresh
            // one for the ingest side to fill.
            let (items, joining, devices, lost, stopping) = shared.withLock { shared in
                defer { shared.joining.removeAll() }
                // Awake until it says otherwise below: what comes meanwhile needs no wake-up.
                shared.writerAwake = true
                var items: [Item] = []
                if !shared.pending.isEmpty {
                    // Room for as many as this batch: the ingest side rarely grows the array
                    // under the lock (a stalled client's batches are a queue's worth).
                    items.reserveCapacity(max(batchTarget, shared.pending.count))
                    swap(&items, &shared.pending)
                }
                return (items, shared.joining, (known: shared.devices, version: shared.devicesVersion), shared.lostBeforeWriter, shared.stopping)
            }
            if stopping { break }
            clients += joining.map(Client.init)
            if lost > lostBefore {
                for client in clients { client.lose(lost - lostBefore) }
                lostBefore = lost
            }
            if !items.isEmpty {
                let batch = RecordBatch(items: items, devices: devices.known, devicesVersion: devices.version)
                for client in clients { client.take(batch, encoder) }
            }
            for client in clients { client.flush(encoder) }
            settle(&clients)
            // Wait for the next batch, a client's room to write or its hang-up. Idle: until the
            // next item. Values flowing: until `batchTarget` wait or `linger` passes. Every
            // client's socket full: until one has room, or values enough to fill the smallest
            // queue wait.
            var timeout: Int32 = -1
            var wakeAt = 1
            // Only values taken make it linger: after a client joins, the next value goes at once.
            if !items.isEmpty {
                if !clients.isEmpty, clients.allSatisfy(\.backlogged) {
                    wakeAt = clients.map(\.filter.buffer).min() ?? 1
                } else {
                    timeout = lingerMilliseconds
                    wakeAt = batchTarget
                }
            }
            let asleep = shared.withLock { shared -> Bool in
                guard shared.pending.count < wakeAt, shared.joining.isEmpty, !shared.stopping else { return false }
                shared.writerAwake = false
                shared.wakeAt = wakeAt
                return true
            }
            // Enough waits already: look at the sockets without sleeping, then take it.
            if !asleep { timeout = 0 }
            pollFDs.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakePipe.readFD, events: Int16(POLLIN), revents: 0))
            for client in clients {
                pollFDs.append(pollfd(fd: client.fd, events: Int16(POLLIN) | (client.backlogged ? Int16(POLLOUT) : 0), revents: 0))
            }
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
            guard ready > 0 else { continue }
            if pollFDs[0].revents != 0 { wakePipe.drain() }
            for (index, client) in clients.enumerated() {
                let events = pollFDs[index + 1].revents
                guard events != 0 else { continue }
                client.checkHangUp(events)
                if events & Int16(POLLOUT) != 0 { client.flush(encoder) }
            }
            settle(&clients)
        }
        let leftovers = shared.withLock { shared -> [Registration] in
            defer {
                shared.clients.removeAll()
                shared.joining.removeAll()
                shared.pending.removeAll()
                if let tap = shared.tap { pipeline.untap(tap) }
                shared.tap = nil
            }
            return shared.joining
        }
        for client in clients { close(client.fd) }
        for registration in leftovers { close(registration.fd) }
        clientCountSink.yield(0)
        clientCountSink.finish()
    }

    /// Forgets dead clients (closing their sockets), publishes the counters, and lets go of the
    /// pipeline when nobody watches any more.
    private func settle(_ clients: inout [Client]) {
        let gone = clients.filter(\.dead)
        for client in gone { close(client.fd) }
        clients.removeAll(where: \.dead)
        shared.withLock { shared in
            for client in gone { shared.clients[client.id] = nil }
            if !gone.isEmpty { clientCountSink.yield(shared.clients.count) }
            for client in clients { shared.clients[client.id] = ClientStatistics(sent: client.sent, dropped: client.dropped) }
            if shared.clients.isEmpty, let tap = shared.tap {
                pipeline.untap(tap)
                shared.tap = nil
                shared.pending.removeAll()
            }
        }
    }
}

/// The pipe that wakes the writer thread. Written outside the hub's lock (the writer, woken,
/// takes that lock at once), so it stays open as long as the hub can be signalled: it closes when
/// the hub is released, never while a thread may still write to it.
private final class WakePipe: Sendable {
    let readFD: Int32
    private let writeFD: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard wearfleet_pipe_cloexec_nonblock(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    func signal() {
        var one: UInt8 = 1
        _ = write(writeFD, &one, 1)  // EAGAIN: a wake-up is already pending
    }

    func drain() {
        var scratch = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &scratch, { read(readFD, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// Why `WatchHub.addClient` refused a client.
public enum WatchHubError: Error, Equatable, CustomStringConvertible {
    case stopping
    case tooManyClients(limit: Int)

    public var description: String {
        switch self {
        case .stopping: "the daemon is stopping"
        case .tooManyClients(let limit): "\(limit) clients watch already (the most at once)"
        }
    }
}
