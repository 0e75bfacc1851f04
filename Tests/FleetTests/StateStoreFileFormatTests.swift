import FleetCore
import Foundation
import Testing
@testable import Fleet
@testable import FleetState

@Suite struct StateStoreFileFormatTests {
    @Test func encodeThenDecodeGivesTheSameDevices() throws {
        let devices = (0..<5).map { StateStoreFixture.device($0) } + [StateStoreFixture.device(1, type: .random)]
        let decoded = try StateFile.decode(StateFile.encode(devices))
        #expect(decoded == devices.sorted { $0.id < $1.id })
    }

    @Test func encodingIsDeterministicAndVersioned() throws {
        let devices = [StateStoreFixture.device(2), StateStoreFixture.device(1)]
        let data = StateFile.encode(devices)
        #expect(data == StateFile.encode(devices.reversed()))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["formatVersion"] as? Int == 1)
        let first = try #require((object["devices"] as? [[String: Any]])?.first)
        #expect(first["address"] as? String == "C0:FF:EE:00:00:01")
        #expect(first["addressType"] as? String == "public")
        #expect(first["servicesSeen"] as? [String] == ["0000180d-0000-1000-8000-00805f9b34fb", "0000180f-0000-1000-8000-00805f9b34fb"])
    }

    @Test func aFileFromANewerDaemonIsReportedNotGuessedAt() {
        #expect(throws: StateFile.DecodeError.unsupportedVersion(2)) {
            try StateFile.decode(Data(#"{"formatVersion": 2, "devices": [], "futureField": true}"#.utf8))
        }
    }

    @Test(arguments: [
        "", "null", "[]", "{}", #"{"devices": []}"#, #"{"formatVersion": 0, "devices": []}"#,
        #"{"formatVersion": 1}"#, #"{"formatVersion": 1, "devices": [{"address": "nope", "addressType": "public"}]}"#,
        #"{"formatVersion": 1, "devices": [{"address": "AA:BB:CC:DD:EE:FF", "addressType": "static"}]}"#,
        #"{"formatVersion": 1, "devices": [{"address": "AA:BB:CC:DD:EE:FF", "addressType": "public", "membership": "vip"}]}"#,
        "{\"formatVersion\": 1, \"devices\": [",
    ])
    func anythingElseIsCorrupt(text: String) {
        #expect {
            try StateFile.decode(Data(text.utf8))
        } throws: { error in
            guard case .corrupt = error as? StateFile.DecodeError else { return false }
            return true
        }
    }

    @Test func optionalFieldsMayBeAbsent() throws {
        let text = #"{"formatVersion": 1, "devices": [{"address": "aa:bb:cc:dd:ee:ff", "addressType": "random"}]}"#
        let device = try #require(try StateFile.decode(Data(text.utf8)).first)
        #expect(device.id.description == "AA:BB:CC:DD:EE:FF (random)")
        #expect(device.membership == .pool)
        #expect(device.servicesSeen.isEmpty && device.name == nil && device.lastConnected == nil)
    }

    @Test func storeUpdatesAccumulateServicesAndStampConnections() {
        var device = StateStoreFixture.device(1)
        let now = StateStoreFixture.fixedNow
        device.apply(.init(servicesSeen: ["0000180d-0000-1000-8000-00805f9b34fb", "0000181a-0000-1000-8000-00805f9b34fb"],
                           hasBeenReady: true, connectedNow: true), adapter: AdapterID("hci1"), now: now)
        #expect(device.servicesSeen.count == 3)
        #expect(device.lastConnected == now)
        #expect(device.adapter == AdapterID("hci1"))
    }

    @Test(arguments: [
        (nil, [:], "/var/lib/wearfleet"),
        ("/srv/wf", ["STATE_DIRECTORY": "/var/lib/wearfleet"], "/srv/wf"),
        (nil, ["STATE_DIRECTORY": "/var/lib/wearfleet"], "/var/lib/wearfleet"),
        (nil, ["STATE_DIRECTORY": "/var/lib/private/wearfleet:/var/lib/wearfleet-extra"], "/var/lib/private/wearfleet"),
        ("", ["STATE_DIRECTORY": ""], "/var/lib/wearfleet"),
    ] as [(String?, [String: String], String)])
    func stateDirectoryResolution(argument: String?, environment: [String: String], expected: String) {
        #expect(StateDirectory.resolve(argument: argument, environment: environment) == expected)
    }
}
