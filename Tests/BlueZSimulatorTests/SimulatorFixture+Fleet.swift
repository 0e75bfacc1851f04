import BlueZSimulator
import DBus

extension Scenario {
    /// One device of each kind on hci0, addresses fixed for readable tests.
    static var trio: Scenario {
        Scenario(
            seed: 7, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .heartRateStrap, address: "00:1A:7D:00:00:01"),
                DeviceSpec(kind: .watch, address: "C0:00:00:00:00:02"),
                DeviceSpec(kind: .motionBand, address: "C0:00:00:00:00:03", notifyHz: 100),
            ])
    }
}

let strap = "00:1A:7D:00:00:01"
let watch = "C0:00:00:00:00:02"
let band = "C0:00:00:00:00:03"
let heartRateMeasurementUUID = "00002a37-0000-1000-8000-00805f9b34fb"
let batteryLevelUUID = "00002a19-0000-1000-8000-00805f9b34fb"
let motionDataUUID = "7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"
let motionControlUUID = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"
let propertiesInterface = "org.freedesktop.DBus.Properties"

/// Asserts a call fails with exactly this BlueZ error name and text.
func expectError(
    _ name: String, _ text: String? = nil, _ operation: () async throws -> Void
) async throws -> DBusError {
    do {
        try await operation()
    } catch let error as DBusError {
        guard error.name == name, text == nil || error.message == text else {
            throw ExpectationFailed(description: "expected \(name) \(text ?? ""), got \(error)")
        }
        return error
    }
    throw ExpectationFailed(description: "expected \(name), but the call succeeded")
}
