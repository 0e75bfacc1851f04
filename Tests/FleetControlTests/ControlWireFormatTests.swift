import DBus
import Fleet
import FleetControl
import FleetCore
import Testing

@Suite("The control interface's a{sv} records")
struct ControlWireFormatTests {
    @Test func devicesAndStatusSurviveTheRoundTrip() throws {
        for device in SampleFleet.status.controlDevices {
            #expect(try ControlDevice(properties: device.properties) == device)
        }
        let status = SampleFleet.status.controlStatus(version: "1.2.3")
        #expect(try ControlStatus(properties: status.properties) == status)
    }

    @Test func theOwnerOfASharedDeviceSurvivesTheRoundTripAndIsLeftOutWhenNone() throws {
        var device = SampleFleet.status.controlDevices[0]
        #expect(device.properties["Owner"] == nil, "no cluster: no key")
        device.owner = "ward-3"
        #expect(device.properties["Owner"] == .string("ward-3"))
        #expect(try ControlDevice(properties: device.properties).owner == "ward-3")
    }

    @Test func unknownValuesAreLeftOutOfTheMap() {
        let device = SampleFleet.status.controlDevices[1]
        #expect(device.properties["Name"] == nil)
        #expect(device.properties["RSSI"] == nil)
        #expect(device.properties["RetryAttempt"] == .uint32(3))
    }

    @Test func aMapWithoutAddressOrStateIsRejected() {
        #expect(throws: ControlProtocolError.self) { try ControlDevice(properties: ["State": .string("ready")]) }
        #expect(throws: ControlProtocolError.self) { try ControlDevice(properties: ["Address": .string("AA:BB:CC:00:00:01")]) }
    }

    @Test func aMistypedValueIsAnErrorNotATrap() {
        #expect(throws: DBusDecodingError.self) {
            try ControlDevice(properties: ["Address": .string("A"), "State": .string("ready"), "RSSI": .string("-60")])
        }
    }

    @Test func keysFromANewerDaemonAreIgnored() throws {
        let device = try ControlDevice(properties: [
            "Address": .string("AA:BB:CC:00:00:01"), "State": .string("ready"), "Firmware": .string("2.0"),
        ])
        #expect(device.address == "AA:BB:CC:00:00:01")
        #expect(device.name == nil)
    }

    @Test("Device states become a name, a reason and a deadline in seconds", arguments: [
        (DeviceState.ready, "ready", nil as String?, nil as Double?),
        (.connecting(adapter: AdapterID("hci0")), "connecting", nil, nil),
        (.degraded(.subscriptionsIncomplete(missing: ["2a37"])), "degraded", "subscriptionsIncomplete", nil),
        (.suspended(.noPoweredAdapter), "suspended", "noPoweredAdapter", nil),
        (.suspended(.circuitOpen(until: SampleFleet.now + .seconds(30))), "suspended", "circuitOpen", 30),
        (.suspended(.budgetExhausted(.transient, until: SampleFleet.now + .seconds(90))), "suspended", "budgetExhausted(transient)", 90),
        (.backingOff(attempt: 1, deadline: SampleFleet.now + .seconds(-1)), "backingOff", nil, 0),
    ])
    func stateDetail(state: DeviceState, name: String, reason: String?, seconds: Double?) {
        let device = FleetStatus.Device(id: SampleFleet.id("AA:BB:CC:00:00:09"), pinned: true, state: state)
            .controlDevice(now: SampleFleet.now)
        #expect(device.state == name)
        #expect(device.stateReason == reason)
        #expect(device.nextAttemptIn == seconds)
    }
}
