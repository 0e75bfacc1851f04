// Who a device is, independent of BlueZ object paths: the state file, the config and the logs
// all name devices this way, so it survives bluetoothd restarts and adapter renumbering.

/// A Bluetooth device address (`AA:BB:CC:DD:EE:FF`), validated on construction.
///
/// Stored as the 48-bit number the six bytes spell, written order most significant first, so
/// that comparison and hashing never depend on the spelling (upper or lower case) it came in.
/// A number rather than an array of bytes: the fleet builds, hashes and prints addresses for
/// every device on every policy evaluation, and an array cost an allocation each time and a
/// byte-by-byte hash (perf: a sixth of an evaluation with 100 devices).
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The six bytes as the low 48 bits, the first written byte highest.
    private let value: UInt64

    /// The six bytes in the order they are written (most significant first).
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * UInt64($0))) }
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case). Returns nil for anything else.
    public init?(_ text: some StringProtocol) {
        // One pass over the 17 UTF-8 bytes `XX:XX:XX:XX:XX:XX`.
        func nibble(_ byte: UInt8) -> UInt64? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt64(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        var value: UInt64 = 0
        var position = 0
        for byte in text.utf8 {
            defer { position += 1 }
            guard position < 17 else { return nil }
            if position % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return nil }
            } else {
                guard let digit = nibble(byte) else { return nil }
                value = value << 4 | digit
            }
        }
        guard position == 17 else { return nil }
        self.value = value
    }

    /// Builds an address from exactly six bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Upper-case, colon-separated: the spelling BlueZ uses in `Device1.Address`.
    public var description: String {
        let digits: StaticString = "0123456789ABCDEF"
        return String(unsafeUninitializedCapacity: 17) { buffer in
            for index in 0..<6 {
                let byte = Int(truncatingIfNeeded: value >> (40 - 8 * UInt64(index))) & 0xFF
                buffer[index * 3] = digits.utf8Start[byte >> 4]
                buffer[index * 3 + 1] = digits.utf8Start[byte & 0xF]
                if index < 5 { buffer[index * 3 + 2] = UInt8(ascii: ":") }
            }
            return 17
        }
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.value < rhs.value
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

    /// The identity of a device from its `Device1.Address` and `AddressType` as bluetoothd
    /// spells them: a missing or unknown type is `public`, BlueZ's default; nil without a valid
    /// address.
    public init?(bluezAddress address: String?, addressType: String?) {
        guard let address, let parsed = BluetoothAddress(address) else { return nil }
        self.init(address: parsed, addressType: addressType.flatMap(AddressType.init(rawValue:)) ?? .public)
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
