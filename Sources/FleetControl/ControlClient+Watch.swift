import DBus
import Glibc

/// What `WatchValues` is asked for; empty lists mean every device and every characteristic.
public struct WatchRequest: Sendable, Equatable {
    public var addresses: [String]
    public var characteristics: [String]
    public var states: Bool
    /// Records the daemon may hold for this client; nil: the daemon's default.
    public var buffer: UInt32?

    public init(addresses: [String] = [], characteristics: [String] = [], states: Bool = true, buffer: UInt32? = nil) {
        self.addresses = addresses
        self.characteristics = characteristics
        self.states = states
        self.buffer = buffer
    }

    /// The method's `a{sv}` filter.
    public var filter: [String: DBusValue] {
        var filter: [String: DBusValue] = ["States": .boolean(states)]
        if !addresses.isEmpty { filter["Devices"] = .stringArray(addresses) }
        if !characteristics.isEmpty { filter["Characteristics"] = .stringArray(characteristics) }
        if let buffer { filter["Buffer"] = .uint32(buffer) }
        return filter
    }
}

/// The client's end of a watch: one JSON record per datagram, until the daemon closes it.
/// Closing this (or the process ending) ends the watch in the daemon.
public final class WatchSocket: Sendable {
    public enum Reception: Sendable, Equatable {
        case record([UInt8])
        /// The daemon closed the watch (it stopped).
        case closed
        /// `stopFD` became readable: the caller asked to stop.
        case stopped
    }

    public let descriptor: DBusFileDescriptor
    public let maximumRecordBytes: Int

    init(descriptor: DBusFileDescriptor, maximumRecordBytes: Int) {
        self.descriptor = descriptor
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// Waits for the next record, or for `stopFD` (a pipe a signal handler writes to) to become
    /// readable. Throws `ControlClientError.connectionLost` when the socket fails.
    public func receive(stopFD: Int32? = nil) throws -> Reception {
        guard let fd = descriptor.rawValue else { return .closed }
        var buffer = [UInt8](repeating: 0, count: max(maximumRecordBytes, 4096))
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            if let stopFD { fds.append(pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ControlClientError.connectionLost(bus: "the watch socket")
            }
            if fds.count > 1, fds[1].revents != 0 { return .stopped }
            guard fds[0].revents != 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { return .record(Array(buffer[..<count])) }
            if count == 0 { return .closed }
            if errno == EAGAIN || errno == EINTR { continue }
            if errno == ECONNRESET { return .closed }
            throw ControlClientError.connectionLost(bus: "the watch socket")
        }
    }

    public func close() { descriptor.close() }
}

extension ControlClient {
    /// `WatchValues(filter)`: the socket the daemon writes the records to.
    public func watch(_ request: WatchRequest) async throws -> WatchSocket {
        do {
            let reply = try await connection.call(
                destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
                interface: WearfleetControl.interfaceName, member: "WatchValues", [.stringVariantMap(request.filter)],
                timeout: Self.callTimeout)
            try reply.expectSignature("hu")
            let descriptor = try reply.fileDescriptor(at: 0)
            let maximum = try reply.decode(UInt32.self, at: 1)
            return WatchSocket(descriptor: descriptor, maximumRecordBytes: Int(maximum))
        } catch {
            throw ControlClientError(error, bus: bus)
        }
    }
}
