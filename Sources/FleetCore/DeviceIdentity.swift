// Who a device is, independent of BlueZ object paths: the state file, the config and the logs
// all name devices this way, so it survives bluetoothd restarts and adapter renumbering.

/// A Bluetooth device address (`AA:BB:CC:DD:EE:FF`), validated on construction.
///
/// Stored as the six bytes in the order they are written (most significant first), so that
/// comparison and hashing never depend on the spelling (upper or lower case) it came in.
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses `AA:BB:CC:DD:EE:FF` (either case). Returns nil for anything else.
    public init?(_ text: some StringProtocol) {
        // One pass over the 17 UTF-8 bytes `XX:XX:XX:XX:XX:XX`: the fleet parses addresses on
        // every policy evaluation, for every device.
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(6)
        var high: UInt8?
        var position = 0
        for byte in text.utf8 {
            defer { position += 1 }
            guard position < 17 else { return nil }
            if position % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return nil }
            } else if let first = high {
                guard let second = nibble(byte) else { return nil }
                bytes.append(first << 4 | second)
                high = nil
            } else {
                guard let first = nibble(byte) else { return nil }
                high = first
            }
        }
        guard position == 17 else { return nil }
        self.bytes = bytes
    }

    /// Builds an address from exactly six bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// Upper-case, colon-separated: the spelling BlueZ uses in `Device1.Address`.
    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// BlueZ's `AddressType`: LE devices use `public` or `random` addresses.
public enum AddressType: String, Hashable, Sendable, CaseIterable {
    case `public`
    case random
}

/// A device's identity: its address plus address type (the same six bytes can name a public and
/// a random-address device at once).
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var addressType: AddressType

    public init(address: BluetoothAddress, addressType: AddressType = .public) {
        self.address = address
        self.addressType = addressType
    }

    public var description: String {
        addressType == .public ? address.description : "\(address) (random)"
    }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        if lhs.address != rhs.address { return lhs.address < rhs.address }
        return lhs.addressType.rawValue < rhs.addressType.rawValue
    }
}

/// A local Bluetooth controller by its kernel name (`hci0`).
public struct AdapterID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    public var description: String { name }

    public static func < (lhs: AdapterID, rhs: AdapterID) -> Bool { lhs.name < rhs.name }
}
