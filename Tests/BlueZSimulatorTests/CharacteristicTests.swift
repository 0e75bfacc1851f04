import BlueZSimulator
import DBus
import GATT
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("GattCharacteristic1", .serialized)
struct CharacteristicTests {
    @Test("StartNotify delivers heart-rate measurements as Value PropertiesChanged")
    func startNotify() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(strap)
        let path = try await fixture.characteristic(heartRateMeasurementUUID, of: device)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(path, "org.bluez.GattCharacteristic1", "StartNotify")
        let message = try await changes.first(within: .seconds(5), "a Value change") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Value"] != nil
        }
        let bytes = try #require(try message.body.decode([String: DBusValue].self, at: 1)["Value"].map { try [UInt8](dbusValue: $0) })
        let measurement = try HeartRateMeasurement.decode(bytes)
        #expect((50...170).contains(measurement.beatsPerMinute))
        #expect(!measurement.rrIntervals.isEmpty)
        #expect(try await fixture.property(path, "org.bluez.GattCharacteristic1", "Notifying") == .boolean(true))
        await fixture.stop()
    }

    @Test("StopNotify without a session fails; the last StopNotify turns Notifying false")
    func stopNotify() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(strap)
        let path = try await fixture.characteristic(heartRateMeasurementUUID, of: device)
        _ = try await expectError("org.bluez.Error.Failed", "No notify session started") {
            try await fixture.call(path, "org.bluez.GattCharacteristic1", "StopNotify")
        }
        try await fixture.call(path, "org.bluez.GattCharacteristic1", "StartNotify")
        try await fixture.call(path, "org.bluez.GattCharacteristic1", "StopNotify")
        #expect(try await fixture.property(path, "org.bluez.GattCharacteristic1", "Notifying") == .boolean(false))
        await fixture.stop()
    }

    @Test("ReadValue returns the battery level; a notify-only characteristic refuses reads")
    func readValue() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(strap)
        let battery = try await fixture.characteristic(batteryLevelUUID, of: device)
        let reply = try await fixture.call(battery, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        let level = try reply.decode([UInt8].self, at: 0)
        #expect(level.count == 1 && (1...100).contains(level[0]))
        let heartRate = try await fixture.characteristic(heartRateMeasurementUUID, of: device)
        _ = try await expectError("org.bluez.Error.NotPermitted", "Read not permitted") {
            try await fixture.call(heartRate, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        }
        _ = try await expectError("org.bluez.Error.InvalidOffset", "Invalid offset") {
            try await fixture.call(battery, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap(["offset": .uint16(9)])])
        }
        await fixture.stop()
    }

    @Test("AcquireNotify hands out a SOCK_SEQPACKET socket of MTU-3-byte datagrams, closed on disconnect")
    func acquireNotify() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let path = try await fixture.characteristic(motionDataUUID, of: device)
        let reply = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
        let fd = try #require(try reply.fileDescriptor(at: 0).take())
        defer { close(fd) }
        #expect(try reply.decode(UInt16.self, at: 1) == 247)
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length)
        #expect(type == Int32(SOCK_SEQPACKET.rawValue))
        let first = try await receive(fd)
        #expect(first.count == 244)
        try await fixture.call(device, "org.bluez.Device1", "Disconnect")
        // Drain what was queued; the socket then reports end of file.
        let ended = try await withTimeout(.seconds(5), "end of file") {
            while true {
                if try await receive(fd).isEmpty { return true }
            }
        }
        #expect(ended)
        await fixture.stop()
    }

    @Test("a client that closed its AcquireNotify socket does not block the next session, as BlueZ releases it on hang-up")
    func closedNotifySocketIsReleased() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        // 1 Hz: no send comes between closing and acquiring again, so nothing but the hang-up
        // itself can tell the simulator that the first session is over.
        let (_, path, first) = try await acquireMotionData(fixture, rateHz: 1)
        close(first)
        let second = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
        let fd = try #require(try second.fileDescriptor(at: 0).take())
        defer { close(fd) }
        #expect(try await fixture.property(path, "org.bluez.GattCharacteristic1", "NotifyAcquired") == .boolean(true))
        #expect(try await receive(fd).count == 20)
        await fixture.stop()
    }

    @Test("a tap receives a copy of every datagram sent on the acquired socket, and ends with the acquisition")
    func notifyTapCopiesAcquiredDatagrams() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let (device, _, acquired) = try await acquireMotionData(fixture, rateHz: 20)
        defer { close(acquired) }
        let taps = try await fixture.control("TapNotifySockets", [.string(band)])
        guard case .array(_, let sockets) = try #require(taps.first), sockets.count == 1, case .unixFD(let wrapped) = sockets[0] else {
            Issue.record("one tap expected, got \(taps)")
            return
        }
        let tap = try #require(wrapped.take())
        defer { close(tap) }
        // The acquired socket also holds what was sent before the tap existed: find the tap's
        // first datagram there, then both must carry the same datagrams in the same order.
        let first = try await receive(tap)
        var skipped = 0
        while try await receive(acquired) != first {
            skipped += 1
            try #require(skipped < 40, "the tap's first datagram never came on the acquired socket")
        }
        for _ in 0..<5 { #expect(try await receive(tap) == (try await receive(acquired))) }
        try await fixture.call(device, "org.bluez.Device1", "Disconnect")
        let ended = try await withTimeout(.seconds(5), "end of file on the tap") {
            while true {
                if try await receive(tap).isEmpty { return true }
            }
        }
        #expect(ended)
        _ = try await expectError("org.freedesktop.DBus.Error.InvalidArgs", "unknown device 00:00:00:00:00:00") {
            try await fixture.control("TapNotifySockets", [.string("00:00:00:00:00:00")])
        }
        await fixture.stop()
    }

    @Test("a write with response while another is pending fails InProgress")
    func writeRequestsSerialize() async throws {
        var timings = SimulatorTimings.fast
        timings.writeLatency = 0.3
        let fixture = try await SimulatorFixture.start(.trio, timings: timings)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        let request: [DBusValue] = [.bytes([0x03]), .stringVariantMap(["type": .string("request")])]
        async let first: [DBusValue] = fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", request)
        try await withTimeout(.seconds(5), "the first write") {
            while try await fixture.counter("WritesReceived", band) == 0 { await Task.yield() }
        }
        _ = try await expectError("org.bluez.Error.InProgress", "In Progress") {
            try await fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", request)
        }
        _ = try await first
        // A command is never held back by a pending request.
        try await fixture.call(
            control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), .stringVariantMap(["type": .string("command")])])
        await fixture.stop()
    }

    @Test("writes to a characteristic without write flags fail NotPermitted")
    func writeNotPermitted() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(strap)
        let battery = try await fixture.characteristic(batteryLevelUUID, of: device)
        _ = try await expectError("org.bluez.Error.NotPermitted", "Write not permitted") {
            try await fixture.call(battery, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([1]), .stringVariantMap([:])])
        }
        await fixture.stop()
    }

    @Test("the control characteristic takes commands without response and answers by notification")
    func controlCommand() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        let changes = try await fixture.signals(path: control, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(control, "org.bluez.GattCharacteristic1", "StartNotify")
        try await fixture.call(
            control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), .stringVariantMap(["type": .string("command")])])
        let message = try await changes.first(within: .seconds(5), "the control reply") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Value"] != nil
        }
        let reply = try #require(try message.body.decode([String: DBusValue].self, at: 1)["Value"].map { try [UInt8](dbusValue: $0) })
        #expect(reply == [0x83, 0x00, 100, 0, 87])
        #expect(try await fixture.counter("WritesReceived", band) == 1)
        await fixture.stop()
    }

    @Test("AcquireWrite datagrams reach the device in order and count as writes")
    func acquireWrite() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        let reply = try await fixture.call(control, "org.bluez.GattCharacteristic1", "AcquireWrite", [.stringVariantMap([:])])
        let fd = try #require(try reply.fileDescriptor(at: 0).take())
        defer { close(fd) }
        for command: [UInt8] in [[0x01, 200, 0], [0x03], [0x03]] {
            _ = command.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        }
        try await withTimeout(.seconds(5), "three writes counted") {
            while try await fixture.counter("WritesReceived", band) < 3 { await Task.yield() }
        }
        #expect(try await fixture.property(control, "org.bluez.GattCharacteristic1", "WriteAcquired") == .boolean(true))
        await fixture.stop()
    }

    @Test("notify sessions end when the subscribing client disconnects from the bus")
    func notifySessionEndsWithClient() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(strap)
        let path = try await fixture.characteristic(heartRateMeasurementUUID, of: device)
        let other = try await DBusConnection.connect(to: .address(fixture.bus.address))
        _ = try await other.call(destination: "org.bluez", path: path, interface: "org.bluez.GattCharacteristic1", member: "StartNotify")
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        await other.close()
        _ = try await changes.first(within: .seconds(5), "Notifying=false") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Notifying"] == .boolean(false)
        }
        await fixture.stop()
    }
}

/// The band streaming 20-byte values at `rateHz`, connected, its motion data acquired: the
/// device, the characteristic and the acquired socket (the caller closes it).
private func acquireMotionData(
    _ fixture: SimulatorFixture, rateHz: Double
) async throws -> (device: DBusObjectPath, path: DBusObjectPath, fd: Int32) {
    try await fixture.control("SetMotionStream", [.string(band), .double(rateHz), .uint32(20)])
    let device = try await fixture.connect(band)
    let path = try await fixture.characteristic(motionDataUUID, of: device)
    let reply = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
    return (device, path, try #require(try reply.fileDescriptor(at: 0).take()))
}

/// One datagram, waited for with poll(2) on a thread of its own (empty at end of file).
private func receive(_ fd: Int32) async throws -> [UInt8] {
    let received: [UInt8]? = await withCheckedContinuation { continuation in
        let thread = Thread {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, 5000) == 1 else { return continuation.resume(returning: nil) }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            continuation.resume(returning: count > 0 ? Array(buffer[0..<count]) : [])
        }
        thread.start()
    }
    guard let received else { throw ExpectationFailed(description: "no datagram within 5 s") }
    return received
}

@Suite("Motion band streaming", .serialized)
struct MotionStreamTests {
    @Test("a rate command sent before subscribing does not keep the stream from starting")
    func rateBeforeSubscribe() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        try await fixture.call(
            control, "org.bluez.GattCharacteristic1", "WriteValue",
            [.bytes([0x01, 0xE8, 0x03]), .stringVariantMap(["type": .string("command")])])
        let data = try await fixture.characteristic(motionDataUUID, of: device)
        let changes = try await fixture.signals(path: data, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(data, "org.bluez.GattCharacteristic1", "StartNotify")
        _ = try await changes.first(within: .seconds(5), "a motion notification") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Value"] != nil
        }
        await fixture.stop()
    }

    @Test("timestamped notifications have the scenario's size and carry their CLOCK_MONOTONIC send time")
    func timestamps() async throws {
        let scenario = Scenario(
            seed: 7, adapters: [AdapterSpec(name: "hci0")],
            devices: [DeviceSpec(kind: .motionBand, address: band, notifyHz: 100, payloadSize: 20, timestamps: true)])
        let fixture = try await SimulatorFixture.start(scenario)
        let device = try await fixture.connect(band)
        let path = try await fixture.characteristic(motionDataUUID, of: device)
        let before = monotonicNanoseconds()
        let reply = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
        let fd = try #require(try reply.fileDescriptor(at: 0).take())
        defer { close(fd) }
        let first = try await receive(fd)
        let after = monotonicNanoseconds()
        #expect(first.count == 20)
        let sent = first[2..<10].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(sent >= before && sent <= after)
        await fixture.stop()
    }

    @Test("streams started together do not tick together: each device's first notification comes at its own phase")
    func streamsHavePhasesOfTheirOwn() async throws {
        // Phase-locked streams would all send within a millisecond or two of each other; real
        // devices notify in connection events whose anchors are unrelated.
        let addresses = (1...8).map { "C0:00:00:00:00:0\($0)" }
        let scenario = Scenario(
            seed: 7, adapters: [AdapterSpec(name: "hci0", slots: 8)],
            devices: addresses.map { DeviceSpec(kind: .motionBand, address: $0, notifyHz: 2, payloadSize: 20, timestamps: true) })
        let fixture = try await SimulatorFixture.start(scenario)
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for address in addresses {
            let device = try await fixture.connect(address)
            let path = try await fixture.characteristic(motionDataUUID, of: device)
            let reply = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
            sockets.append(try #require(try reply.fileDescriptor(at: 0).take()))
        }
        // Every stream restarts at once, at 2 Hz: a period of 500 ms.
        let restart = monotonicNanoseconds()
        try await fixture.control("SetMotionStream", [.string(""), .double(2), .uint32(20)])
        var phases: [Double] = []
        for fd in sockets {
            while true {
                let datagram = try await receive(fd)
                let sent = datagram[2..<10].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard sent >= restart else { continue }  // sent before the restart
                phases.append(Double(sent - restart) / 1e6)
                break
            }
        }
        let spread = try #require(phases.max()) - (try #require(phases.min()))
        #expect(phases.allSatisfy { $0 < 600 }, "each first notification within one period of the restart: \(phases)")
        #expect(spread > 125, "first notifications spread over more than a quarter of the period: \(phases)")
        await fixture.stop()
    }

    @Test("SetMotionStream changes a running stream's payload size and rejects values out of range")
    func setMotionStream() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let path = try await fixture.characteristic(motionDataUUID, of: device)
        let reply = try await fixture.call(path, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
        let fd = try #require(try reply.fileDescriptor(at: 0).take())
        defer { close(fd) }
        #expect(try await receive(fd).count == 244)
        try await fixture.control("SetMotionStream", [.string(""), .double(500), .uint32(30)])
        // Datagrams queued before the change still have the old size; the new size follows.
        let resized = try await withTimeout(.seconds(5), "a 30-byte notification") {
            while true {
                let datagram = try await receive(fd)
                if datagram.count == 30 { return true }
            }
        }
        #expect(resized)
        _ = try await expectError(DBusError.invalidArgs) {
            try await fixture.control("SetMotionStream", [.string(band), .double(0), .uint32(20)])
        }
        _ = try await expectError(DBusError.invalidArgs) {
            try await fixture.control("SetMotionStream", [.string(band), .double(50), .uint32(513)])
        }
        _ = try await expectError(DBusError.invalidArgs) {
            try await fixture.control("SetMotionStream", [.string("C0:FF:FF:FF:FF:FF"), .double(50), .uint32(20)])
        }
        await fixture.stop()
    }
}

private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
