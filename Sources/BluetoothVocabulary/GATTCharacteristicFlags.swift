/// What a GATT characteristic allows, as BlueZ's `GattCharacteristic1.Flags` strings name it:
/// the characteristic's properties (`read`, `write`, `notify`, …), its extended properties
/// (`reliable-write`, `writable-auxiliaries`) and, on the server side, its security requirements
/// (`encrypt-read`, `secure-write`, `authorize`, …).
///
/// Guarantees: parsed once from the strings (`init(bluezFlags:)`), after which callers test
/// members instead of comparing strings; `bluezFlags` spells a set back in BlueZ's words, in the
/// order BlueZ's documentation lists them, and parsing those words gives the same set. A string
/// BlueZ adds later is ignored rather than refused.
public struct GATTCharacteristicFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 1 << 0)
    public static let read = Self(rawValue: 1 << 1)
    public static let writeWithoutResponse = Self(rawValue: 1 << 2)
    public static let write = Self(rawValue: 1 << 3)
    public static let notify = Self(rawValue: 1 << 4)
    public static let indicate = Self(rawValue: 1 << 5)
    public static let authenticatedSignedWrites = Self(rawValue: 1 << 6)
    public static let extendedProperties = Self(rawValue: 1 << 7)
    public static let reliableWrite = Self(rawValue: 1 << 8)
    public static let writableAuxiliaries = Self(rawValue: 1 << 9)
    public static let encryptRead = Self(rawValue: 1 << 10)
    public static let encryptWrite = Self(rawValue: 1 << 11)
    public static let encryptNotify = Self(rawValue: 1 << 12)
    public static let encryptIndicate = Self(rawValue: 1 << 13)
    public static let encryptAuthenticatedRead = Self(rawValue: 1 << 14)
    public static let encryptAuthenticatedWrite = Self(rawValue: 1 << 15)
    public static let encryptAuthenticatedNotify = Self(rawValue: 1 << 16)
    public static let encryptAuthenticatedIndicate = Self(rawValue: 1 << 17)
    public static let secureRead = Self(rawValue: 1 << 18)
    public static let secureWrite = Self(rawValue: 1 << 19)
    public static let secureNotify = Self(rawValue: 1 << 20)
    public static let secureIndicate = Self(rawValue: 1 << 21)
    public static let authorize = Self(rawValue: 1 << 22)

    /// Any way of writing a value: a write request, a command, or a signed command.
    public static let anyWrite: Self = [.write, .writeWithoutResponse, .authenticatedSignedWrites]
    /// Any way of being told a value: notifications or indications.
    public static let anyNotification: Self = [.notify, .indicate]

    /// Each flag with its BlueZ string, in the order of BlueZ's `doc/org.bluez.GattCharacteristic.rst`.
    public static let bluezNames: [(flag: Self, name: String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties"),
        (.reliableWrite, "reliable-write"), (.writableAuxiliaries, "writable-auxiliaries"),
        (.encryptRead, "encrypt-read"), (.encryptWrite, "encrypt-write"), (.encryptNotify, "encrypt-notify"),
        (.encryptIndicate, "encrypt-indicate"), (.encryptAuthenticatedRead, "encrypt-authenticated-read"),
        (.encryptAuthenticatedWrite, "encrypt-authenticated-write"),
        (.encryptAuthenticatedNotify, "encrypt-authenticated-notify"),
        (.encryptAuthenticatedIndicate, "encrypt-authenticated-indicate"),
        (.secureRead, "secure-read"), (.secureWrite, "secure-write"), (.secureNotify, "secure-notify"),
        (.secureIndicate, "secure-indicate"), (.authorize, "authorize"),
    ]

    private static let byName: [String: Self] = Dictionary(uniqueKeysWithValues: bluezNames.map { ($0.name, $0.flag) })

    /// Parses BlueZ's `Flags` strings; unknown strings are ignored.
    public init(bluezFlags names: some Sequence<String>) {
        self = names.reduce(into: []) { flags, name in flags.formUnion(Self.byName[name] ?? []) }
    }

    /// The set in BlueZ's words, as `Flags` carries it.
    public var bluezFlags: [String] {
        Self.bluezNames.filter { contains($0.flag) }.map(\.name)
    }
}
