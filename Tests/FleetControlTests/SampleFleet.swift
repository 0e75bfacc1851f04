import Fleet
import FleetControl
import FleetCore

/// A small fleet in every kind of state, for the rendering and interface tests.
enum SampleFleet {
    static let now = MonotonicInstant(nanoseconds: 1_000_000_000_000)

    static func id(_ text: String, _ type: AddressType = .public) -> DeviceID {
        guard let address = BluetoothAddress(text) else { preconditionFailure("not an address literal: \(text)") }
        return DeviceID(address: address, addressType: type)
    }

    static var status: FleetStatus {
        FleetStatus(
            bluetoothdPresent: true,
            devices: [
                FleetStatus.Device(
                    id: id("AA:BB:CC:00:00:02"), pinned: true, className: "heart-rate",
                    state: .backingOff(attempt: 3, deadline: now + .milliseconds(4200)), sessions: 5,
                    lastFailure: .outOfSlots),
                FleetStatus.Device(
                    id: id("AA:BB:CC:00:00:01"), name: "strap-1", pinned: true, className: "heart-rate", state: .ready,
                    adapter: AdapterID("hci0"), rssi: -61, lastValue: "72 bpm, RR 812 ms", sessions: 3, reconnects: 2,
                    notifications: 1234, decodeErrors: 1, lastFailure: .transient),
                FleetStatus.Device(
                    id: id("AA:BB:CC:00:00:03", .random), name: "心拍センサー", pinned: false, state: .suspended(.gaveUp(.denied))),
            ],
            adapters: [
                FleetStatus.Adapter(id: AdapterID("hci1"), powered: false, slots: 5, linksAndAttempts: 0, discovering: false),
                FleetStatus.Adapter(id: AdapterID("hci0"), powered: true, slots: 7, linksAndAttempts: 1, discovering: true),
            ],
            capturedAt: now)
    }
}
