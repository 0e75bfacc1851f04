// BlueZ names attributes by 128-bit lower-case UUID strings while specifications and config files
// use 16-bit short forms; one value type makes every spelling compare equal.

/// A Bluetooth attribute UUID, stored in its full 128-bit form.
///
/// 16- and 32-bit UUIDs are shorthand for `0000xxxx-0000-1000-8000-00805f9b34fb` (the Bluetooth
/// base UUID), so `BluetoothUUID(0x2A37)` equals the parsed `"2a37"`, `"0x2A37"` and
/// `"00002a37-0000-1000-8000-00805f9b34fb"`. `description` is the canonical lower-case 128-bit
/// spelling, exactly as BlueZ prints it over D-Bus.
public struct BluetoothUUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The most significant 64 bits.
    public let high: UInt64
    /// The least significant 64 bits.
    public let low: UInt64

    /// Bits 0...95 of the Bluetooth base UUID; a 16/32-bit UUID fills in bits 96...127.
    private static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit SIG-assigned UUID, expanded with the base UUID.
    public init(_ uuid16: UInt16) {
        self.init(uuid32: UInt32(uuid16))
    }

    /// A 32-bit SIG-assigned UUID, expanded with the base UUID.
    public init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// Parses `2a37`, `0x2A37` (16-bit), `0000180d`/`0x0000180D` (32-bit),
    /// `00002a37-0000-1000-8000-00805f9b34fb` or the same 32 digits without dashes (128-bit),
    /// in either case. Returns nil for anything else.
    public init?(_ text: some StringProtocol) {
        var digits = Substring(text)
        let hasPrefix = digits.hasPrefix("0x") || digits.hasPrefix("0X")
        if hasPrefix { digits = digits.dropFirst(2) }
        switch digits.count {
        case 4:
            guard let value = Self.hexValue(digits) else { return nil }
            self.init(UInt16(truncatingIfNeeded: value))
        case 8:
            guard let value = Self.hexValue(digits) else { return nil }
            self.init(uuid32: UInt32(truncatingIfNeeded: value))
        case 32 where !hasPrefix:
            guard let high = Self.hexValue(digits.prefix(16)), let low = Self.hexValue(digits.suffix(16)) else { return nil }
            self.init(high: high, low: low)
        case 36 where !hasPrefix:
            let groups = digits.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
            let joined = groups.joined()
            guard let high = Self.hexValue(joined.prefix(16)), let low = Self.hexValue(joined.suffix(16)) else { return nil }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// Only hex digits: `UInt64(_:radix:)` alone would also accept a leading sign.
    private static func hexValue(_ text: some StringProtocol) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ Self.isHexDigit($0) }) else { return nil }
        return UInt64(text, radix: 16)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// The 32-bit short form, when this UUID is built on the Bluetooth base UUID.
    public var uuid32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16-bit short form, when this UUID is a 16-bit SIG-assigned UUID.
    public var uuid16: UInt16? {
        guard let value = uuid32, value <= 0xFFFF else { return nil }
        return UInt16(value)
    }

    /// Canonical lower-case 128-bit form, `00002a37-0000-1000-8000-00805f9b34fb`.
    public var description: String {
        let h = DecimalText.hex(high, digits: 16)
        let l = DecimalText.hex(low, digits: 16)
        return "\(h.prefix(8))-\(h.dropFirst(8).prefix(4))-\(h.suffix(4))-\(l.prefix(4))-\(l.suffix(12))"
    }

    /// `0x2a37` for 16-bit UUIDs, the canonical 128-bit form otherwise: for human-facing text.
    public var shortDescription: String {
        guard let short = uuid16 else { return description }
        return "0x" + DecimalText.hex(UInt64(short), digits: 4)
    }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
