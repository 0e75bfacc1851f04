import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

/// `reject-writes`: a peripheral that answers write requests with an ATT error, as bluetoothd
/// 5.66 reports it (`create_gatt_dbus_error` in `src/gatt-client.c`).
@Suite("Writes the device refuses (reject-writes)", .serialized)
struct RefusedWriteTests {
    static let request: DBusValue = .stringVariantMap(["type": .string("request")])
    static let command: DBusValue = .stringVariantMap(["type": .string("command")])

    @Test("a write request fails org.bluez.Error.Failed with the ATT error in hex; a command is received and dropped")
    func refusedWithDefaultCode() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        // 0: the default code, 0xfc, the one a strap refused writes with on the real stack.
        try await fixture.control("SetRejectWrites", [.string(band), .string(motionControlUUID), .byte(0)])
        _ = try await expectError("org.bluez.Error.Failed", "Operation failed with ATT error: 0xfc") {
            try await fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), Self.request])
        }
        try await fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), Self.command])
        #expect(try await fixture.counter("WritesReceived", band) == 2)
        #expect(try await fixture.counter("WritesRefused", band) == 2)
        #expect(try await fixture.property(device, "org.bluez.Device1", "ServicesResolved") == .boolean(true))
        // An empty uuid ends it: the next request goes through.
        try await fixture.control("SetRejectWrites", [.string(band), .string(""), .byte(0)])
        try await fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), Self.request])
        #expect(try await fixture.counter("WritesRefused", band) == 2)
        await fixture.stop()
    }

    @Test("codes with an error of their own in bluetoothd 5.66 are answered with it")
    func dedicatedErrors() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let control = try await fixture.characteristic(motionControlUUID, of: device)
        let expected: [(UInt8, String, String)] = [
            (0x03, "org.bluez.Error.NotPermitted", "Write not permitted"),
            (0x0f, "org.bluez.Error.NotPermitted", "Not paired"),
            (0x0d, "org.bluez.Error.InvalidArguments", "Invalid Length"),
            (0x80, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x80"),
        ]
        for (code, name, text) in expected {
            try await fixture.control("SetRejectWrites", [.string(band), .string(motionControlUUID), .byte(code)])
            _ = try await expectError(name, text) {
                try await fixture.call(control, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x03]), Self.request])
            }
        }
        await fixture.stop()
    }

    @Test("a scenario's faults and schedule spell both faults in JSON")
    func scenarioJSON() throws {
        let text = """
            {
              "devices": [ { "kind": "motion-band", "faults": { "rejectWritesUUID": "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40" } } ],
              "schedule": [
                { "at": 5, "fault": { "kind": "stall-discovery", "adapter": "hci0" } },
                { "at": 6, "fault": { "kind": "reject-writes", "uuid": "2a39", "attError": 19 } }
              ]
            }
            """
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(text.utf8))
        let fleet = try scenario.resolved()
        #expect(fleet.devices[0].faults.rejectWritesUUID == motionControlUUID)
        #expect(fleet.devices[0].faults.rejectWritesATTError == nil, "the default, 0xfc")
        #expect(scenario.schedule?.map(\.fault.kind) == [.stallDiscovery, .rejectWrites])
        #expect(scenario.schedule?.last?.fault.attError == 0x13)
        #expect(scenario.schedule?.first?.fault.adapter == "hci0")
        var refusingSuccess = scenario
        refusingSuccess.devices[0].faults?.rejectWritesATTError = 0
        #expect(throws: ScenarioError.self) { try refusingSuccess.resolved() }
    }

    @Test("a refusal with ATT error 0 or a uuid that is not one fails InvalidArgs")
    func invalidArguments() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        await #expect(throws: DBusError.self) {
            try await fixture.simulator.apply(FaultCommand(.rejectWrites, device: band, uuid: motionControlUUID, attError: 0))
        }
        _ = try await expectError(DBusError.invalidArgs) {
            try await fixture.control("SetRejectWrites", [.string(band), .string("not-a-uuid"), .byte(0)])
        }
        await fixture.stop()
    }
}
