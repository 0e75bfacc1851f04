import BlueZSimulator
import DBus
import Fleet
import FleetControl
import FleetCore
import Foundation
import DetachedThread
import Logging
import Synchronization
import Testing
import TestSupport

/// `WatchValues` and `DeviceStateChanged` end to end: bands streaming from the simulated
/// bluetoothd, the fleet, the control endpoint on the same private bus, and watch clients that
/// read (or do not).
@Suite("Watching values through the control interface")
struct WatchSimulatorTests {
    static let quiet = Logger(label: "watch-test") { _ in SwiftLogNoOpLogHandler() }

    struct Setup {
        let fleet: FleetSimulatorFixture
        let endpoint: ControlEndpoint
        let client: ControlClient
        let ids: [DeviceID]

        func stop() async {
            await client.close()
            await endpoint.stop()
            await fleet.stop()
        }
    }

    static func start(_ addresses: [String], fdPath: Bool, seed: UInt64, hz: Double = 50) async throws -> Setup {
        let scenario = Scenario(
            seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: addresses.map { DeviceSpec(kind: .motionBand, address: $0, addressType: "random", bonded: true, mtu: 247, notifyHz: hz) })
        let ids = try addresses.map { try FleetSimulatorFixture.id($0, random: true) }
        let configuration = FleetRuntimeConfiguration(
            pinned: ids.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "band") },
            classes: ["band": FleetSimulatorFixture.bandClass(fdPath: fdPath)], pool: PoolConfiguration(maxConnections: 8))
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: seed)
        let orchestrator = fleet.orchestrator
        let endpoint = try await ControlEndpoint.start(
            bus: .address(fleet.bus.address), logger: quiet, status: { await orchestrator.status() }, fleet: orchestrator)
        let client = try await ControlClient.connect(to: .address(fleet.bus.address))
        return Setup(fleet: fleet, endpoint: endpoint, client: client, ids: ids)
    }

    /// The next record on `socket`, waiting at most `timeout` for it.
    static func record(_ socket: WatchSocket, within timeout: Duration = .seconds(10)) async throws -> [String: Any] {
        let reader = WatchReader.of(socket)
        let bytes = try await withTimeout(timeout, "a watch record") {
            for await datagram in reader.datagrams { return datagram }
            throw WatchEnded()
        }
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(object as? [String: Any])
    }

    /// Reads a watch socket on a thread of its own (the tasks' threads are few and the simulator
    /// needs them), handing each datagram over as it comes.
    final class WatchReader: Sendable {
        let datagrams: AsyncStream<[UInt8]>
        private static let readers = Mutex<[ObjectIdentifier: WatchReader]>([:])

        static func of(_ socket: WatchSocket) -> WatchReader {
            readers.withLock { readers in
                if let known = readers[ObjectIdentifier(socket)] { return known }
                let reader = WatchReader(socket)
                readers[ObjectIdentifier(socket)] = reader
                return reader
            }
        }

        private init(_ socket: WatchSocket) {
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            datagrams = stream
            let fd = socket.descriptor.rawValue ?? -1
            // The thread owns a duplicate, so closing the socket in the test cannot hand its
            // number to another descriptor under the thread.
            let own = dup(fd)
            try? DetachedThread.start(name: "watch-reader") {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = recv(own, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    continuation.yield(Array(buffer[..<count]))
                }
                close(own)
                continuation.finish()
            }
        }
    }

    struct WatchEnded: Error {}

    /// The band's sequence number: the payload's first two bytes, little-endian.
    static func sequence(_ record: [String: Any]) -> Int? {
        guard let hex = record["hex"] as? String, hex.count >= 4 else { return nil }
        let bytes = Array(hex.utf8.prefix(4)).map { Int(String(UnicodeScalar($0)), radix: 16) ?? 0 }
        return (bytes[2] * 16 + bytes[3]) * 256 + bytes[0] * 16 + bytes[1]
    }

    /// Reads value records until each device has `count` of them, checking that each device's
    /// sequence numbers follow one another without a gap.
    static func expectContiguous(_ socket: WatchSocket, devices: [String], count: Int) async throws -> [String: Int] {
        var last: [String: Int] = [:]
        var received: [String: Int] = [:]
        while devices.contains(where: { received[$0, default: 0] < count }) {
            let record = try await record(socket)
            guard record["kind"] as? String == "raw", let device = record["device"] as? String, let sequence = sequence(record) else {
                #expect(record["kind"] as? String != "dropped", "a reading client lost records: \(record)")
                continue
            }
            #expect(devices.contains(device))
            if let previous = last[device] {
                #expect(sequence == (previous + 1) & 0xFFFF, "\(device): \(previous) then \(sequence)")
            }
            last[device] = sequence
            received[device, default: 0] += 1
            #expect(record["characteristic"] as? String == FleetSimulatorFixture.bandData)
            #expect(record["session"] is String, "the session is known once the device is ready")
        }
        return received
    }

    @Test(arguments: [false, true])
    func aWatcherReceivesEveryValueInOrderPerDevice(fdPath: Bool) async throws {
        let addresses = ["C4:7A:10:00:70:01", "C4:7A:10:00:70:02"]
        let setup = try await Self.start(addresses, fdPath: fdPath, seed: fdPath ? 71 : 72)
        try await setup.fleet.waitForStatus("both bands ready") { $0.pinnedReady == 2 }
        let socket = try await setup.client.watch(WatchRequest(states: false))
        _ = try await Self.expectContiguous(socket, devices: addresses, count: 100)
        socket.close()
        await setup.stop()
    }

    @Test func theFilterNamesDevicesAndCharacteristics() async throws {
        let addresses = ["C4:7A:10:00:71:01", "C4:7A:10:00:71:02"]
        let setup = try await Self.start(addresses, fdPath: true, seed: 73)
        try await setup.fleet.waitForStatus("both bands ready") { $0.pinnedReady == 2 }
        // One device, by its address in lower case; its data characteristic in 128-bit form.
        let one = try await setup.client.watch(
            WatchRequest(addresses: [addresses[1].lowercased()], characteristics: [FleetSimulatorFixture.bandData.uppercased()]))
        let received = try await Self.expectContiguous(one, devices: [addresses[1]], count: 50)
        #expect(received[addresses[0]] == nil)
        // A characteristic the band does not have: nothing but what the filter lets through.
        let none = try await setup.client.watch(WatchRequest(characteristics: ["2a37"], states: false))
        _ = try await Self.expectContiguous(one, devices: [addresses[1]], count: 20)
        let fd = try #require(none.descriptor.rawValue)
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pollFD, 1, 0) == 0, "no heart rate values from bands")
        #expect(await setup.endpoint.live?.hub.statistics.values.map(\.sent).min() == 0)
        one.close()
        none.close()
        await setup.stop()
    }

    @Test func aWatcherThatNeverReadsLeavesIngestAndOtherWatchersUnaffected() async throws {
        let addresses = ["C4:7A:10:00:72:01", "C4:7A:10:00:72:02"]
        let setup = try await Self.start(addresses, fdPath: true, seed: 74, hz: 200)
        try await setup.fleet.waitForStatus("both bands ready") { $0.pinnedReady == 2 }
        let hub = try #require(await setup.endpoint.live?.hub)
        let stalled = try await setup.client.watch(WatchRequest(states: false, buffer: 16))
        let reader = try await setup.client.watch(WatchRequest(states: false))
        let pipeline = setup.fleet.orchestrator.pipeline
        let before = setup.ids.map { pipeline.counters(for: $0).notifications }
        // 2 bands × 200 Hz: the stalled client's socket and queue fill within the first second.
        _ = try await Self.expectContiguous(reader, devices: addresses, count: 600)
        let after = setup.ids.map { pipeline.counters(for: $0).notifications }
        // Ingest kept pace with the bands (the reader's first values may predate `before`).
        for (first, then) in zip(before, after) { #expect(then >= first + 500, "ingest kept going: \(first) → \(then)") }
        let statistics = hub.statistics
        #expect(statistics.count == 2)
        let stalledDrops = try #require(statistics.values.map(\.dropped).max())
        #expect(stalledDrops > 0, "the stalled client lost its oldest records: \(statistics)")
        #expect(statistics.values.map(\.dropped).min() == 0, "the reading client lost nothing: \(statistics)")
        // Reading at last, the stalled client gets what its socket kept, then how much it lost.
        var dropReport: Int?
        for _ in 0..<2000 where dropReport == nil {
            let record = try await Self.record(stalled)
            if record["kind"] as? String == "dropped" { dropReport = record["dropped"] as? Int }
        }
        #expect((dropReport ?? 0) > 0, "the stalled client was told it lost records")
        stalled.close()
        reader.close()
        await setup.stop()
    }

    @Test func aClientHangingUpIsForgottenAndTheFleetStopsFeedingTheHub() async throws {
        let setup = try await Self.start(["C4:7A:10:00:73:01"], fdPath: false, seed: 75)
        try await setup.fleet.waitForStatus("the band ready") { $0.pinnedReady == 1 }
        let hub = try #require(await setup.endpoint.live?.hub)
        let counts = hub.clientCounts
        #expect(!hub.takesValues)
        let socket = try await setup.client.watch(WatchRequest())
        _ = try await Self.record(socket)
        #expect(hub.takesValues)
        #expect(hub.clientCount == 1)
        // The test's reader thread holds a duplicate: shut the socket itself down, as the last
        // close does when a client exits.
        _ = shutdown(try #require(socket.descriptor.rawValue), Int32(SHUT_RDWR))
        socket.close()
        try await withTimeout(.seconds(10), "the hub to forget the client") {
            for await count in counts where count == 0 { return }
        }
        #expect(hub.clientCount == 0)
        #expect(!hub.takesValues, "nobody watching: values no longer reach the hub")
        await setup.stop()
    }

    @Test func stateChangesAreRecordsAndSignals() async throws {
        let address = "C4:7A:10:00:74:01"
        let setup = try await Self.start([address], fdPath: true, seed: 76)
        try await setup.fleet.waitForStatus("the band ready") { $0.pinnedReady == 1 }
        let signals = try await setup.client.connection.signals(
            matching: MatchRule(interface: WearfleetControl.interfaceName, member: "DeviceStateChanged"))
        let socket = try await setup.client.watch(WatchRequest(characteristics: ["2a37"]))
        // The link drops: the band leaves `ready`, then comes back.
        try await setup.fleet.simulator.apply(FaultCommand(.dropLink, device: address))
        var states: [String] = []
        while !(states.count > 1 && states.last == "ready") {
            let record = try await Self.record(socket, within: .seconds(30))
            #expect(record["kind"] as? String == "state")
            #expect(record["device"] as? String == address && record["address_type"] as? String == "random")
            #expect(record["session"] is String && record["previous"] is String)
            states.append(try #require(record["state"] as? String))
        }
        #expect(states.first != "ready")
        // The signal of the band leaving `ready`: the initial connection's own signals may still
        // be on their way when the subscription starts (they are sent after the status says ready).
        let signal = try await withTimeout(.seconds(10), "the DeviceStateChanged signal of the band leaving ready") {
            for try await message in signals where (try? message.body.decode(String.self, at: 3)) == "ready" { return message }
            throw WatchEnded()
        }
        #expect(signal.signature == "sssssss")
        #expect(try signal.body.decode(String.self, at: 0) == address)
        #expect(try signal.body.decode(String.self, at: 1) == "random")
        #expect(try signal.body.decode(String.self, at: 2) == states.first)
        #expect(!(try signal.body.decode(String.self, at: 6)).isEmpty, "the session, as the journal names it")
        socket.close()
        await setup.stop()
    }

    @Test func aFilterTheDaemonCannotUseIsRefusedWithANamedError() async throws {
        let setup = try await Self.start(["C4:7A:10:00:75:01"], fdPath: false, seed: 77)
        let bad: [[String: DBusValue]] = [
            ["Devices": .stringArray(["not-an-address"])],
            ["Characteristics": .stringArray(["heart rate"])],
            ["Devices": .string("C4:7A:10:00:75:01")],
            ["Buffer": .uint32(1)],
            ["States": .string("yes")],
            ["Colour": .boolean(true)],
        ]
        for filter in bad {
            do {
                _ = try await setup.client.connection.call(
                    destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
                    interface: WearfleetControl.interfaceName, member: "WatchValues", [.stringVariantMap(filter)])
                Issue.record("accepted \(filter)")
            } catch let error as DBusError {
                #expect(error.name == WearfleetControl.ErrorName.invalidFilter, "\(filter): \(error)")
            }
        }
        // As the client reports it: a usage error.
        await #expect(throws: ControlClientError.invalidFilter("Devices: 'nope' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")) {
            _ = try await setup.client.watch(WatchRequest(addresses: ["nope"]))
        }
        #expect(await setup.endpoint.live?.hub.clientCount == 0, "a refused filter starts nothing")
        await setup.stop()
    }
}
