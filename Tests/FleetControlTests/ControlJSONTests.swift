import FleetControl
import Foundation
import Testing

@Suite("wearfleetctl --json: a stable schema")
struct ControlJSONTests {
    static let deviceKeys: Set<String> = [
        "address", "addressType", "name", "pinned", "class", "state", "stateReason", "retryAttempt", "nextAttemptInSeconds",
        "adapter", "rssi", "lastValue", "lastValueTime", "sessions", "reconnects", "notifications", "decodeErrors", "lastError",
        "owner",
    ]

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func statusHasEveryKeyAndTheSchemaVersion() throws {
        let json = try object(try ControlJSON.status(StatusTableTests.sample))
        #expect(Set(json.keys) == [
            "schemaVersion", "version", "bluetoothdPresent", "summary", "pinnedReady", "pinnedTotal", "poolConnected",
            "deviceCount", "adapters", "devices",
        ])
        #expect(json["schemaVersion"] as? Int == 1)
        #expect(json["pinnedReady"] as? Int == 1)
        #expect(json["pinnedTotal"] as? Int == 2)
        let adapters = try #require(json["adapters"] as? [[String: Any]])
        #expect(adapters.map { $0["id"] as? String } == ["hci0", "hci1"])
        #expect(Set(adapters[0].keys) == ["id", "powered", "slots", "used", "discovering"])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.count == 3)
        for device in devices { #expect(Set(device.keys) == Self.deviceKeys) }
    }

    @Test func unknownValuesAreNullNotMissing() throws {
        let device = try object(try ControlJSON.device(StatusTableTests.sample.devices[1]))
        #expect(Set(device.keys) == Self.deviceKeys)
        #expect(device["name"] is NSNull)
        #expect(device["rssi"] is NSNull)
        #expect(device["retryAttempt"] as? Int == 3)
        #expect(device["nextAttemptInSeconds"] as? Double == 4.2)
        #expect(device["lastError"] as? String == "outOfSlots")
    }

    @Test func unicodeAndControlCharactersSurviveAsJSONStrings() throws {
        var device = StatusTableTests.sample.devices[2]
        device.name = "心拍\u{1B}[0m"
        let text = try ControlJSON.device(device)
        #expect(!text.contains("\u{1B}"), "escaped, not raw")
        #expect(try object(text)["name"] as? String == "心拍\u{1B}[0m")
    }
}
