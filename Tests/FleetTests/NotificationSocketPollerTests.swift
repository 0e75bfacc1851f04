import Fleet
import FleetCore
import Glibc
import Testing
import TestSupport

/// A SOCK_SEQPACKET socket pair, as AcquireNotify hands out one end of.
private func seqpacketPair() throws -> (Int32, Int32) {
    var pair: [Int32] = [-1, -1]
    try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
    return (pair[0], pair[1])
}

@Suite("Reading AcquireNotify sockets")
struct NotificationSocketPollerTests {
    struct Received: Sendable, Equatable {
        let device: DeviceID
        let characteristic: String
        let bytes: [UInt8]
    }

    @Test func eachDatagramIsOneValueAndAHangUpForgetsTheSocket() async throws {
        let device = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:00:00:09")))
        let (stream, sink) = AsyncStream<Received>.makeStream()
        let poller = try NotificationSocketPoller { device, characteristic in
            { bytes in sink.yield(Received(device: device, characteristic: characteristic, bytes: bytes)) }
        }
        defer { poller.stop() }
        let pair = try seqpacketPair()
        poller.add(fd: pair.0, device: device, characteristic: "2a37", mtu: 247)
        for payload: [UInt8] in [[0x06, 70], [0x06, 71, 0, 0], [0x06, 72]] {
            _ = payload.withUnsafeBytes { send(pair.1, $0.baseAddress, $0.count, 0) }
        }
        let values = try await withTimeout(.seconds(5), "three notifications") {
            var values: [[UInt8]] = []
            for await received in stream {
                values.append(received.bytes)
                if values.count == 3 { break }
            }
            return values
        }
        #expect(values == [[0x06, 70], [0x06, 71, 0, 0], [0x06, 72]], "datagram boundaries are kept")
        close(pair.1)  // BlueZ closes the socket when the link drops
        try await withTimeout(.seconds(5), "the socket to be forgotten") {
            while poller.socketCount > 0 { await Task.yield() }
        }
    }
}

extension NotificationSocketPollerTests {
    /// 100 datagrams sent before the peer hangs up: more than one `recvmmsg` batch, and a hang-up
    /// that arrives with data still queued. Every value comes out, once, in order, then the
    /// socket is forgotten.
    @Test func aBurstQueuedBeforeTheHangUpIsDeliveredWholeAndInOrder() async throws {
        let device = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:00:00:0B")))
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream()
        let pair = try seqpacketPair()
        var buffer: Int32 = 1 << 20
        setsockopt(pair.1, SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        for index in 0..<100 {
            let payload: [UInt8] = [0x06, UInt8(index)] + Array(repeating: UInt8(index), count: index % 20)
            try #require(payload.withUnsafeBytes { send(pair.1, $0.baseAddress, $0.count, 0) } == payload.count)
        }
        close(pair.1)
        let poller = try NotificationSocketPoller { _, _ in { bytes in sink.yield(bytes) } }
        defer { poller.stop() }
        poller.add(fd: pair.0, device: device, characteristic: "2a37", mtu: 23)
        let values = try await withTimeout(.seconds(5), "100 notifications") {
            var values: [[UInt8]] = []
            for await bytes in stream {
                values.append(bytes)
                if values.count == 100 { break }
            }
            return values
        }
        #expect(values == (0..<100).map { [0x06, UInt8($0)] + Array(repeating: UInt8($0), count: $0 % 20) })
        try await withTimeout(.seconds(5), "the socket to be forgotten") {
            while poller.socketCount > 0 { await Task.yield() }
        }
    }
}

/// The poller's descriptors are closed only where nothing can still use their numbers: the kernel
/// reuses a closed number at once, so a late read or wake-up would hit another socket (in the
/// daemon, another device's socket or the bus connection).
@Suite("Closing AcquireNotify sockets")
struct NotificationSocketPollerClosingTests {
    private static let device = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:0A")!)

    /// Waits (on this thread, briefly) for `fd` to be readable; true if it became readable.
    private static func readable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    @Test func aRemovedSocketIsClosedAndItsNumberIsNeverReadAgain() async throws {
        let poller = try NotificationSocketPoller { _, _ in { _ in } }
        defer { poller.stop() }
        for round in 0..<200 {
            let (removed, removedPeer) = try seqpacketPair()
            defer { close(removedPeer) }
            poller.add(fd: removed, device: Self.device, characteristic: "2a37", mtu: 23)
            var byte: UInt8 = UInt8(round % 256)
            _ = send(removedPeer, &byte, 1, Int32(MSG_DONTWAIT))
            poller.remove(device: Self.device)
            // A new socket made right away; it must keep every datagram sent to it.
            let (fresh, freshPeer) = try seqpacketPair()
            defer { close(fresh); close(freshPeer) }
            for _ in 0..<4 { _ = send(freshPeer, &byte, 1, Int32(MSG_DONTWAIT)) }
            var received = 0
            var buffer = [UInt8](repeating: 0, count: 8)
            while received < 4, Self.readable(fresh, milliseconds: 1000) {
                guard recv(fresh, &buffer, buffer.count, Int32(MSG_DONTWAIT)) == 1 else { break }
                received += 1
            }
            #expect(received == 4, "round \(round): the new socket lost \(4 - received) datagrams to the poller")
            // The removed socket's peer sees it closed.
            #expect(Self.readable(removedPeer, milliseconds: 5000), "round \(round): the removed socket was not closed")
            if received != 4 { break }
        }
    }

    @Test func callsAfterTheThreadExitedTouchNoDescriptor() async throws {
        let poller = try NotificationSocketPoller { _, _ in { _ in } }
        poller.stop()
        try await withTimeout(.seconds(5), "the poller's thread to exit") {
            while poller.isRunning { await Task.yield() }
        }
        // The numbers the poller's pipe had are free now; open enough pipes to take them again.
        var pipes: [[Int32]] = []
        defer { for fds in pipes { close(fds[0]); close(fds[1]) } }
        for _ in 0..<8 {
            var fds: [Int32] = [-1, -1]
            try #require(pipe(&fds) == 0)
            pipes.append(fds)
        }
        poller.stop()
        poller.remove(device: Self.device)
        let (late, latePeer) = try seqpacketPair()
        defer { close(latePeer) }
        poller.add(fd: late, device: Self.device, characteristic: "2a37", mtu: 23)
        for fds in pipes {
            #expect(!Self.readable(fds[0], milliseconds: 0), "a late call wrote into fd \(fds[1])")
        }
        #expect(Self.readable(latePeer, milliseconds: 5000), "a socket added after stop is closed at once")
        #expect(poller.socketCount == 0)
    }
}
