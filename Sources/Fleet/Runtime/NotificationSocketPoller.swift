import CSocketSupport
import DetachedThread
import FleetCore
import FoundationEssentials
import Glibc
import Synchronization

/// Reads notifications from `AcquireNotify` sockets: one thread, one `poll()` over every socket,
/// so the fd path costs a `recv` per notification and never touches the bus.
///
/// Each socket is SOCK_SEQPACKET: one datagram is one value. BlueZ closes the socket when the
/// link drops; the poller then forgets it (the device learns of the disconnect from BlueZ's
/// `Connected` property, not from here).
///
/// Only the poller's thread closes a registered socket. A socket removed by another thread is
/// retired and closed by the thread before it polls again: closing it at once would let the
/// kernel hand its number to a new descriptor (another device's socket, a bus connection) that
/// the thread, still holding the old poll set, would then read from.
public final class NotificationSocketPoller: Sendable {
    public typealias Sink = @Sendable (_ device: DeviceID, _ characteristic: String, _ bytes: [UInt8]) -> Void

    private struct Registration: Sendable {
        let fd: Int32
        let device: DeviceID
        let characteristic: String
        let mtu: Int
    }

    private struct Shared: Sendable {
        var registrations: [Int32: Registration] = [:]
        /// Removed sockets the thread has still to close.
        var retired: [Int32] = []
        var stopping = false
        /// Set by the thread as it exits: from then on `remove` closes sockets itself.
        var exited = false
        var generation: UInt64 = 0
    }

    private let shared = Mutex(Shared())
    /// A self-pipe wakes `poll()` when sockets are added or removed.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let sink: Sink

    public init(sink: @escaping Sink) throws {
        var pipeFDs: [Int32] = [-1, -1]
        // Close-on-exec from the start: a process spawned meanwhile must not inherit the pipe.
        guard wearfleet_pipe_cloexec_nonblock(&pipeFDs) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        self.sink = sink
        do {
            try DetachedThread.start(name: "notify-poll") { [self] in self.run() }
        } catch {
            close(wakeFD)
            close(wakeWriteFD)
            throw POSIXError(.init(rawValue: error.code) ?? .EAGAIN)
        }
    }

    /// Takes ownership of `fd` (closed on `remove`, on hang-up, or on `stop`; at once if the
    /// poller has already stopped).
    public func add(fd: Int32, device: DeviceID, characteristic: String, mtu: UInt16) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.exited else { return false }
            shared.registrations[fd] = Registration(fd: fd, device: device, characteristic: characteristic, mtu: Int(mtu))
            shared.generation += 1
            wake(shared)
            return true
        }
        if !accepted { close(fd) }
    }

    /// Closes every socket of `device` (it disconnected or is no longer wanted): the poller stops
    /// reading them now, and its thread closes them before it polls again.
    public func remove(device: DeviceID) {
        let closeHere = shared.withLock { shared -> [Int32] in
            let fds = shared.registrations.values.filter { $0.device == device }.map(\.fd)
            guard !fds.isEmpty else { return [] }
            for fd in fds { shared.registrations[fd] = nil }
            guard !shared.exited else { return fds }
            shared.retired += fds
            shared.generation += 1
            wake(shared)
            return []
        }
        for fd in closeHere { close(fd) }
    }

    public var socketCount: Int { shared.withLock { $0.registrations.count } }

    /// False once the thread has stopped and closed every socket.
    public var isRunning: Bool { shared.withLock { !$0.exited } }

    /// Ends the thread and closes every socket. Calling it again, or calling `remove` or `add`
    /// afterwards, is safe.
    public func stop() {
        shared.withLock { shared in
            shared.stopping = true
            wake(shared)
        }
    }

    /// Wakes the thread's `poll()`. Called under the lock and only while the thread runs: the
    /// thread closes the pipe under the same lock as it exits, so a late caller can never write
    /// into a descriptor number the kernel has since given to something else.
    private func wake(_ shared: borrowing Shared) {
        guard !shared.exited else { return }
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)  // EAGAIN: the pipe is full, a wake-up is already pending
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        // The poll set is rebuilt only when the registrations change, not on every wake-up.
        var seenGeneration: UInt64?
        var order: [Registration] = []
        var fds: [pollfd] = []
        while true {
            let (generation, stopping, retired) = shared.withLock { shared in
                defer { shared.retired.removeAll() }
                return (shared.generation, shared.stopping, shared.retired)
            }
            if stopping { break }
            // Retired sockets are closed before the poll set is rebuilt without them, both on this
            // thread, so no stale entry can name a number the kernel has handed out again.
            for fd in retired { close(fd) }
            if generation != seenGeneration {
                order = Array(shared.withLock { $0.registrations }.values)
                fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
                fds += order.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
                seenGeneration = generation
            } else {
                for index in fds.indices { fds[index].revents = 0 }
            }
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeFD, &drain, drain.count) > 0 {}
            }
            for (index, registration) in order.enumerated() {
                let revents = fds[index + 1].revents
                guard revents != 0 else { continue }
                var hungUp = revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                if revents & Int16(POLLIN) != 0 {
                    if buffer.count < registration.mtu { buffer = [UInt8](repeating: 0, count: registration.mtu) }
                    while true {
                        let count = buffer.withUnsafeMutableBytes { recv(registration.fd, $0.baseAddress, $0.count, 0) }
                        if count > 0 {
                            sink(registration.device, registration.characteristic, Array(buffer[0..<count]))
                        } else {
                            if count == 0 { hungUp = true }  // orderly shutdown by BlueZ
                            break
                        }
                    }
                }
                if hungUp { forget(registration.fd) }
            }
        }
        let remaining = shared.withLock { shared -> [Int32] in
            defer {
                shared.registrations.removeAll()
                shared.retired.removeAll()
                shared.exited = true
                close(wakeWriteFD)
            }
            return Array(shared.registrations.keys) + shared.retired
        }
        for fd in remaining { close(fd) }
        close(wakeFD)
    }

    private func forget(_ fd: Int32) {
        let owned = shared.withLock { shared -> Bool in
            shared.generation += 1
            return shared.registrations.removeValue(forKey: fd) != nil
        }
        if owned { close(fd) }
    }
}
