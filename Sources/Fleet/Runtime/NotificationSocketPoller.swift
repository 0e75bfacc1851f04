import FleetCore
import Foundation
import Glibc
import Synchronization

/// Reads notifications from `AcquireNotify` sockets: one thread, one `poll()` over every socket,
/// so the fd path costs a `recv` per notification and never touches the bus.
///
/// Each socket is SOCK_SEQPACKET: one datagram is one value. BlueZ closes the socket when the
/// link drops; the poller then forgets it (the device learns of the disconnect from BlueZ's
/// `Connected` property, not from here).
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
        var stopping = false
        var generation: UInt64 = 0
    }

    private let shared = Mutex(Shared())
    /// A self-pipe wakes `poll()` when sockets are added or removed.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let sink: Sink

    public init(sink: @escaping Sink) throws {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        self.sink = sink
        let thread = Thread { [self] in self.run() }
        thread.name = "notify-poll"
        thread.start()
    }

    /// Takes ownership of `fd` (closed on `remove`, on hang-up, or on `stop`).
    public func add(fd: Int32, device: DeviceID, characteristic: String, mtu: UInt16) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        shared.withLock {
            $0.registrations[fd] = Registration(fd: fd, device: device, characteristic: characteristic, mtu: Int(mtu))
            $0.generation += 1
        }
        wake()
    }

    /// Closes every socket of `device` (it disconnected or is no longer wanted).
    public func remove(device: DeviceID) {
        let closed = shared.withLock { shared -> [Int32] in
            let fds = shared.registrations.values.filter { $0.device == device }.map(\.fd)
            for fd in fds { shared.registrations[fd] = nil }
            shared.generation += 1
            return fds
        }
        wake()
        for fd in closed { close(fd) }
    }

    public var socketCount: Int { shared.withLock { $0.registrations.count } }

    /// Ends the thread and closes every socket.
    public func stop() {
        shared.withLock { $0.stopping = true }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        // The poll set is rebuilt only when the registrations change, not on every wake-up.
        var seenGeneration: UInt64?
        var order: [Registration] = []
        var fds: [pollfd] = []
        while true {
            let (generation, stopping) = shared.withLock { ($0.generation, $0.stopping) }
            if stopping { break }
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
            defer { shared.registrations.removeAll() }
            return Array(shared.registrations.keys)
        }
        for fd in remaining { close(fd) }
        close(wakeFD)
        close(wakeWriteFD)
    }

    private func forget(_ fd: Int32) {
        let owned = shared.withLock { shared -> Bool in
            shared.generation += 1
            return shared.registrations.removeValue(forKey: fd) != nil
        }
        if owned { close(fd) }
    }
}
