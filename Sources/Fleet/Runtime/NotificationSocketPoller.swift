import CSocketSupport
import DetachedThread
import FleetCore
import FoundationEssentials
import Glibc
import Synchronization

/// Reads notifications from `AcquireNotify` sockets: one thread waits in `epoll_wait` on every
/// socket, so the fd path never touches the bus and costs, per wake-up, one `epoll_wait` (whatever
/// the number of sockets) and, per readable socket, `recvmmsg` calls of up to 16 datagrams until
/// one comes back short (nearly always the first).
///
/// Each socket is SOCK_SEQPACKET: one datagram is one value. BlueZ closes the socket when the
/// link drops, and also when its end of the notify session fails while the link stays up; the
/// poller then forgets the socket and reports the hang-up (`hungUp`), so that a device whose
/// link is still up subscribes again instead of staying ready and silent (the device learns of
/// a disconnect from BlueZ's `Connected` property, not from here).
///
/// Only the poller's thread closes a registered socket. A socket removed by another thread is
/// retired and closed by the thread before it waits again: closing it at once would let the
/// kernel hand its number to a new descriptor (another device's socket, a bus connection) that
/// the thread, in the middle of a batch of events, would then read from.
public final class NotificationSocketPoller: Sendable {
    /// Takes the values of one socket, each one datagram's bytes.
    public typealias Receiver = @Sendable (_ bytes: [UInt8]) -> Void
    /// Where a characteristic's values go: asked once per socket, when it is added.
    public typealias Receivers = @Sendable (_ device: DeviceID, _ characteristic: String) -> Receiver
    /// Told, on the poller's thread, that the peer closed a socket (not one `remove`d): must not block.
    public typealias HangUp = @Sendable (_ device: DeviceID, _ characteristic: String) -> Void

    private struct Registration: Sendable {
        let fd: Int32
        let device: DeviceID
        let characteristic: String
        let receiver: Receiver
        let mtu: Int
    }

    private struct Shared: Sendable {
        /// By token: the epoll event's data, never reused, so a late event of a removed socket
        /// can never be taken for a new socket that got the same descriptor number.
        var registrations: [UInt64: Registration] = [:]
        var nextToken: UInt64 = 1
        /// Removed sockets the thread has still to close.
        var retired: [Int32] = []
        var stopping = false
        /// Set by the thread as it exits: from then on `remove` closes sockets itself.
        var exited = false
    }

    /// The token of the wake-up pipe's events.
    private static let wakeToken: UInt64 = 0
    /// Datagrams read from one socket per `recvmmsg`.
    private static let batch = 16

    private let shared = Mutex(Shared())
    private let epollFD: Int32
    /// A self-pipe wakes `epoll_wait` to close retired sockets or to stop.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let receivers: Receivers
    private let hungUp: HangUp

    public init(receivers: @escaping Receivers, hungUp: @escaping HangUp = { _, _ in }) throws {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var pipeFDs: [Int32] = [-1, -1]
        // Close-on-exec from the start: a process spawned meanwhile must not inherit the pipe.
        guard wearfleet_pipe_cloexec_nonblock(&pipeFDs) == 0 else {
            let code = errno
            close(epollFD)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeToken))
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, pipeFDs[0], &event) == 0 else {
            let code = errno
            for fd in [epollFD, pipeFDs[0], pipeFDs[1]] { close(fd) }
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        self.epollFD = epollFD
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        self.receivers = receivers
        self.hungUp = hungUp
        do {
            try DetachedThread.start(name: "notify-poll") { [self] in self.run() }
        } catch {
            for fd in [epollFD, wakeFD, wakeWriteFD] { close(fd) }
            throw POSIXError(.init(rawValue: error.code) ?? .EAGAIN)
        }
    }

    /// Takes ownership of `fd` (closed on `remove`, on hang-up, or on `stop`; at once if the
    /// poller has already stopped or cannot watch it).
    public func add(fd: Int32, device: DeviceID, characteristic: String, mtu: UInt16) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let receiver = receivers(device, characteristic)
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.exited else { return false }
            let token = shared.nextToken
            var event = epoll_event(events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, data: epoll_data_t(u64: token))
            // epoll_ctl may run while the thread waits: the wait sees the new socket at once.
            guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else { return false }
            shared.nextToken += 1
            shared.registrations[token] = Registration(fd: fd, device: device, characteristic: characteristic, receiver: receiver, mtu: Int(mtu))
            return true
        }
        if !accepted { close(fd) }
    }

    /// Closes every socket of `device` (it disconnected or is no longer wanted): the poller stops
    /// delivering its values now, and its thread closes them before it waits again.
    public func remove(device: DeviceID) {
        remove { $0.device == device }
    }

    /// Closes the device's socket of one characteristic (its subscription was removed).
    public func remove(device: DeviceID, characteristic: String) {
        remove { $0.device == device && $0.characteristic == characteristic }
    }

    private func remove(where matches: (Registration) -> Bool) {
        let closeHere = shared.withLock { shared -> [Int32] in
            let tokens = shared.registrations.filter { matches($0.value) }.map(\.key)
            guard !tokens.isEmpty else { return [] }
            let fds = tokens.compactMap { shared.registrations.removeValue(forKey: $0)?.fd }
            guard !shared.exited else { return fds }
            shared.retired += fds
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

    /// Wakes the thread's `epoll_wait`. Called under the lock and only while the thread runs: the
    /// thread closes the pipe under the same lock as it exits, so a late caller can never write
    /// into a descriptor number the kernel has since given to something else.
    private func wake(_ shared: borrowing Shared) {
        guard !shared.exited else { return }
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)  // EAGAIN: the pipe is full, a wake-up is already pending
    }

    // MARK: - The thread

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var buffer: [UInt8] = []
        var lengths = [UInt](repeating: 0, count: Self.batch)
        while true {
            let (stopping, retired) = shared.withLock { shared in
                defer { shared.retired.removeAll() }
                return (shared.stopping, shared.retired)
            }
            if stopping { break }
            for fd in retired { unwatchAndClose(fd) }
            let ready = epoll_wait(epollFD, &events, Int32(events.count), -1)
            guard ready >= 0 else {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<Int(ready) {
                let event = events[index]
                let token = event.data.u64
                if token == Self.wakeToken {
                    var drain = [UInt8](repeating: 0, count: 64)
                    while read(wakeFD, &drain, drain.count) > 0 {}
                    continue
                }
                // Removed meanwhile: its descriptor is retired, not closed yet, and not read again.
                guard let registration = shared.withLock({ $0.registrations[token] }) else { continue }
                var hungUp = event.events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
                if event.events & EPOLLIN.rawValue != 0 {
                    hungUp = receive(from: registration, into: &buffer, lengths: &lengths) || hungUp
                }
                // EPOLLRDHUP with data still queued: read it first (above), then forget the socket.
                if event.events & EPOLLRDHUP.rawValue != 0 { hungUp = true }
                if hungUp {
                    forget(token)
                    self.hungUp(registration.device, registration.characteristic)
                }
            }
        }
        let remaining = shared.withLock { shared -> [Int32] in
            defer {
                shared.registrations.removeAll()
                shared.retired.removeAll()
                shared.exited = true
                close(wakeWriteFD)
            }
            return shared.registrations.values.map(\.fd) + shared.retired
        }
        for fd in remaining { close(fd) }
        close(wakeFD)
        close(epollFD)
    }

    /// Delivers every datagram queued on the socket, `batch` per system call. True when the peer
    /// has shut the socket down (or it failed).
    private func receive(from registration: Registration, into buffer: inout [UInt8], lengths: inout [UInt]) -> Bool {
        let slot = max(registration.mtu, 23)
        if buffer.count < slot * Self.batch { buffer = [UInt8](repeating: 0, count: slot * Self.batch) }
        while true {
            let received = buffer.withUnsafeMutableBufferPointer { bytes in
                lengths.withUnsafeMutableBufferPointer { sizes in
                    wearfleet_receive_datagrams(registration.fd, bytes.baseAddress, UInt(slot), UInt32(Self.batch), sizes.baseAddress)
                }
            }
            guard received > 0 else {
                return received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            }
            for index in 0..<Int(received) {
                let length = Int(lengths[index])
                guard length > 0 else { return true }  // orderly shutdown by BlueZ
                let start = index * slot
                registration.receiver(Array(buffer[start..<start + length]))
            }
            // A short batch emptied the queue; a full one may have left more.
            if received < Self.batch { return false }
        }
    }

    private func forget(_ token: UInt64) {
        let fd = shared.withLock { $0.registrations.removeValue(forKey: token)?.fd }
        if let fd { unwatchAndClose(fd) }
    }

    private func unwatchAndClose(_ fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        close(fd)
    }
}
