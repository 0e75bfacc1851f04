import FleetCore

/// Short names for test fleets: device 7 is `00:00:00:00:00:07`, adapter 1 is `hci1`.
enum PoolFixture {
    static func device(_ number: Int) -> DeviceID {
        let bytes: [UInt8] = [0, 0, 0, 0, UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number)]
        guard let address = BluetoothAddress(bytes: bytes) else { fatalError("six bytes always make an address") }
        return DeviceID(address: address)
    }

    static func adapter(_ number: Int) -> AdapterID { AdapterID("hci\(number)") }

    static func adapters(_ count: Int, powered: Bool = true) -> [AdapterSnapshot] {
        (0..<count).map { AdapterSnapshot(id: adapter($0), isPowered: powered) }
    }

    static func instant(seconds: Int64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: seconds * 1_000_000_000)
    }

    static func instant(milliseconds: Int64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: milliseconds * 1_000_000)
    }
}
