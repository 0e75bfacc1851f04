import BlueZ
import DBus
import FleetCore
import Foundation
import Glibc
import ProcessSupport

/// `fleet-bench writer`: writes without response from 10 devices' queues, through FleetCore's
/// `OutgoingScheduler` and the simulator's AcquireWrite sockets.
///
/// wearfleetd does not drive writes at run time yet (its write path is being wired), so this role
/// runs what that path is built from, in a process of its own: the scheduler (bounded bulk queues,
/// credits, deficit round robin over bytes) feeding one AcquireWrite socket per device. Credits
/// come from the socket's readiness (POLLOUT), the only backpressure BlueZ offers for writes
/// without response. Producers keep every queue full and count the writes the scheduler refuses
/// (`queueFull`), so the queue bound is exercised all the time. Device i writes (20 + 20·i)-byte
/// values, so fairness is over bytes, as the scheduler promises.
/// Prints one JSON line (`WriterReport`) and exits.
enum WriterRole {
    struct Report: Codable {
        var seconds: Double
        var cpuMicroseconds: Int64
        var writesPerDevice: [String: Int]
        var bytesPerDevice: [String: Int]
        var queueCapacity: Int
        var deepestQueue: Int
        var refusedQueueFull: Int
    }

    static func run(bus: String, addresses: [String], seconds: Double) throws {
        let sockets = try runBlocking { try await acquire(bus: bus, addresses: addresses) }
        let report = drive(sockets, seconds: seconds)
        let line = try JSONEncoder().encode(report)
        writeLine(String(decoding: line, as: UTF8.self))
        for socket in sockets { close(socket.fd) }
    }

    struct WriteSocket: Sendable {
        var device: DeviceID
        var address: String
        var fd: Int32
        var characteristic: String
    }

    /// Connects each device through BlueZ and acquires its control characteristic's write socket.
    private static func acquire(bus: String, addresses: [String]) async throws -> [WriteSocket] {
        let connection = try await DBusConnection.connect(to: .address(bus), threadName: "bench-writer")
        let client = BlueZClient(connection: connection)
        try await client.start()
        var sockets: [WriteSocket] = []
        for address in addresses {
            guard let parsed = BluetoothAddress(address),
                let device = await client.tree.devices(address: address).first
            else { throw BenchError("writer: no device \(address) in bluetoothd's tree") }
            do {
                try await client.connect(device: device.path)
            } catch {
                throw BenchError("writer: connecting \(address): \(error)")
            }
            let path = device.path
            _ = await client.waitForTree(timeout: .seconds(10)) { tree in
                tree.characteristics(of: path).contains { $0.uuid == BenchUUIDs.motionControl }
            }
            guard let control = await client.tree.characteristics(of: path).first(where: { $0.uuid == BenchUUIDs.motionControl })
            else { throw BenchError("writer: \(address) has no control characteristic") }
            let acquired: BlueZAcquiredSocket
            do {
                acquired = try await client.acquireWrite(characteristic: control.path)
            } catch {
                throw BenchError("writer: AcquireWrite on \(address): \(error)")
            }
            guard let fd = acquired.descriptor.take() else { throw BenchError("writer: AcquireWrite gave no descriptor") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            sockets.append(WriteSocket(device: DeviceID(address: parsed, addressType: .random), address: address, fd: fd, characteristic: control.path.description))
        }
        return sockets
    }

    private static func drive(_ sockets: [WriteSocket], seconds: Double) -> Report {
        let configuration = OutgoingConfiguration()
        var scheduler = OutgoingScheduler(configuration: configuration)
        let byDevice = Dictionary(uniqueKeysWithValues: sockets.enumerated().map { ($1.device, ($0, $1)) })
        var writes = [Int](repeating: 0, count: sockets.count)
        var bytes = [Int](repeating: 0, count: sockets.count)
        var deepest = 0
        var refused = 0
        /// A write the socket refused (EAGAIN) goes first next time.
        var held: [Int: [UInt8]] = [:]
        let properties: OutgoingWriteProperties = [.writeWithoutResponse, .write]
        let payloads = sockets.indices.map { index in [UInt8(0x03)] + [UInt8](repeating: UInt8(index), count: 19 + 20 * index) }
        let start = MonotonicTime.seconds
        let cpuBefore = processCPUMicroseconds()
        let started = MonotonicInstant(nanoseconds: 0)
        while MonotonicTime.seconds - start < seconds {
            // Producers: fill every bulk queue until the scheduler refuses.
            for (index, socket) in sockets.enumerated() {
                let write = OutgoingWrite(
                    characteristic: OutgoingCharacteristic(id: socket.characteristic, properties: properties),
                    bytes: payloads[index], qos: .bulk, mode: .withoutResponse)
                while true {
                    do {
                        try scheduler.enqueue(write, for: socket.device, now: started)
                    } catch {
                        refused += 1
                        break
                    }
                }
                deepest = max(deepest, scheduler.queueDepth(device: socket.device, qos: .bulk))
            }
            // Credits: eight for each device whose socket can take datagrams now.
            var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 10) > 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.revents & Int16(POLLOUT) != 0 {
                if let pending = held[index] {
                    guard sendDatagram(sockets[index].fd, pending) else { continue }
                    held[index] = nil
                    writes[index] += 1
                    bytes[index] += pending.count
                }
                scheduler.creditsAvailable(device: sockets[index].device, count: 8)
            }
            while let next = scheduler.nextWrite() {
                guard let (index, socket) = byDevice[next.device] else { continue }
                if sendDatagram(socket.fd, next.bytes) {
                    writes[index] += 1
                    bytes[index] += next.bytes.count
                } else {
                    held[index] = next.bytes
                }
            }
        }
        let elapsed = MonotonicTime.seconds - start
        return Report(
            seconds: elapsed, cpuMicroseconds: processCPUMicroseconds() - cpuBefore,
            writesPerDevice: Dictionary(uniqueKeysWithValues: sockets.enumerated().map { ($1.address, writes[$0]) }),
            bytesPerDevice: Dictionary(uniqueKeysWithValues: sockets.enumerated().map { ($1.address, bytes[$0]) }),
            queueCapacity: configuration.bulkQueueCapacity, deepestQueue: deepest, refusedQueueFull: refused)
    }

    private static func sendDatagram(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) } == bytes.count
    }
}
