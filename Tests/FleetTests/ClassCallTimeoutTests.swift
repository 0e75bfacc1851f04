import BlueZ
import DBus
@testable import Fleet
import FleetCore
import Foundation
import Synchronization
import Logging
import Testing
import TestSupport

/// D-Bus calls that a class timeout bounds take that timeout (and a margin), not a fixed one: a
/// class `connect` timeout above 45 s is not cut short, and a short one is not outlived.
@Suite("Call timeouts follow the class timeouts")
struct ClassCallTimeoutTests {
    static let strap = StandInBluetoothd.strap

    /// A bluetoothd whose `Device1.Connect` never answers (a controller stuck in LE create
    /// connection), with the device's object known to the client.
    static func stuckBluetoothd(on bus: PrivateBus) async throws -> DBusConnection {
        let connection = try await StandInBluetoothd.connect(to: bus, threadName: "stuck-bluez")
        try await StandInBluetoothd.exportStrap(
            on: connection, state: ["Connected": .boolean(false)],
            methods: [
                DBusMethod("Connect", handler: .async { _ in
                    try await Task.sleep(for: .seconds(3600))
                    return []
                }),
            ])
        try await StandInBluetoothd.takeBlueZName(on: connection)
        return connection
    }

    @Test func aConnectCallIsBoundedByTheClassConnectTimeoutNotAFixedOne() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.stuckBluetoothd(on: bus)
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let transport = BlueZDeviceTransport(client: parts.client, poller: parts.poller)
        transport.addCentral(try CentralActor(
            adapter: AdapterID("hci0"), client: parts.client, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))

        // A class connect timeout of 0.5 s: the call gives up 1 s after it, never after the fixed
        // 45 s (the wait below fails long before that; no duration is asserted).
        let failure = try await withTimeout(.seconds(30), "the connect call to time out") { () async throws -> TransportFailure? in
            do throws(TransportFailure) {
                _ = try await transport.connect(Self.strap, adapter: AdapterID("hci0"), within: .milliseconds(500))
                return nil
            } catch {
                return error
            }
        }
        #expect(failure?.kind == .timeout, "a call bluetoothd never answers fails by the call's timeout: \(String(describing: failure))")
        #expect(BlueZDeviceTransport.callTimeout(within: .seconds(90)) > .seconds(90), "a 90 s class timeout is not cut short")
        await parts.client.stop()
        await bluetoothd.close()
    }
}

/// A write channel that records the bound each `WriteValue` call was given.
final class TimeoutRecordingChannel: GATTWriteChannel {
    private let bounds = Mutex<[Duration]>([])
    var recorded: [Duration] { bounds.withLock { $0 } }

    func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic? {
        FleetCharacteristic(handle: "/char", flags: [.write])
    }

    func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure) {
        bounds.withLock { $0.append(.zero) }
    }

    func writeValue(
        _ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool, within timeout: Duration
    ) async throws(DeviceEvent.Failure) {
        bounds.withLock { $0.append(timeout) }
    }

    func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)? { nil }
}

@Suite("Write calls follow the class write timeout")
struct ClassWriteTimeoutTests {
    @Test func aWriteCallIsBoundedByTheDevicesClassWriteTimeout() async throws {
        let channel = TimeoutRecordingChannel()
        let (done, finished) = AsyncStream<Void>.makeStream()
        let coordinator = WriteCoordinator(channel: channel, clock: SystemMonotonicClock()) { _, event in
            if event == .writeCompleted { finished.yield() }
        }
        let strap = ClassCallTimeoutTests.strap
        await coordinator.configure(strap, options: OutgoingDeviceOptions(), writeTimeout: .seconds(90))
        await coordinator.linkReady(strap, useSocket: false)
        _ = try await coordinator.enqueue(
            strap, characteristic: "00002a39-0000-1000-8000-00805f9b34fb", bytes: [1], qos: .normal, mode: .withResponse,
            replaceable: false)
        _ = try await done.first(within: .seconds(10), "the write to complete") { _ in true }
        #expect(channel.recorded == [.seconds(90)], "the class's 90 s, not the client's fixed 30 s")
        #expect(BlueZDeviceTransport.callTimeout(within: .seconds(90)) == .seconds(91))
    }
}
