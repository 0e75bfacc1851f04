import DBus
import FleetControl
import FleetCore
import GATT

/// What one watch client asked for (`WatchValues`'s `a{sv}`): which devices, which
/// characteristics, whether state changes too, and how many records may wait for it.
///
/// Keys (all optional; the empty filter is every device's values and state changes):
/// - `Devices` `as`: addresses (`AA:BB:CC:DD:EE:FF`, either case); a device matches by address,
///   whatever its address type.
/// - `Characteristics` `as`: UUIDs, 16-bit (`2a37`, `0x2A37`) or 128-bit; values of other
///   characteristics are left out.
/// - `States` `b`: state change records too (default true).
/// - `Buffer` `u`: records that may wait for the client in the daemon, 16…65536 (default 1024).
///
/// Anything else (an unknown key, a mistyped value, a bad address or UUID, a buffer out of range)
/// is refused with `org.wearfleet.Error.InvalidFilter`, naming the key, and nothing is started.
public struct WatchFilter: Sendable, Equatable {
    public static let defaultBuffer = 1024
    public static let bufferRange = 16...65536

    /// Nil: every device.
    public var addresses: Set<BluetoothAddress>?
    /// Lower-case 128-bit UUIDs as BlueZ reports them; nil: every characteristic.
    public var characteristics: Set<String>?
    public var states = true
    public var buffer = WatchFilter.defaultBuffer

    public init(
        addresses: Set<BluetoothAddress>? = nil, characteristics: Set<String>? = nil, states: Bool = true,
        buffer: Int = WatchFilter.defaultBuffer
    ) {
        self.addresses = addresses
        self.characteristics = characteristics
        self.states = states
        self.buffer = buffer
    }

    /// Reads the method's argument; throws the named D-Bus error.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "Devices":
                var addresses = Set<BluetoothAddress>()
                for text in try Self.strings(value, key: key) {
                    guard let address = BluetoothAddress(text) else {
                        throw Self.invalid("Devices: '\(text.prefix(64))' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
                    }
                    addresses.insert(address)
                }
                self.addresses = addresses
            case "Characteristics":
                var uuids = Set<String>()
                for text in try Self.strings(value, key: key) {
                    let bare = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
                    guard let uuid = BluetoothUUID(bare) else {
                        throw Self.invalid("Characteristics: '\(text.prefix(64))' is not a UUID (2a37 or 00002a37-0000-1000-8000-00805f9b34fb)")
                    }
                    uuids.insert(uuid.description)
                }
                characteristics = uuids
            case "States":
                guard case .boolean(let flag) = value else { throw Self.invalid("States must be a boolean (b)") }
                states = flag
            case "Buffer":
                guard case .uint32(let count) = value, Self.bufferRange.contains(Int(count)) else {
                    throw Self.invalid("Buffer must be a uint32 (u) in \(Self.bufferRange.lowerBound)…\(Self.bufferRange.upperBound)")
                }
                buffer = Int(count)
            default:
                throw Self.invalid("unknown key '\(key.prefix(64))' (known: Devices, Characteristics, States, Buffer)")
            }
        }
    }

    /// Every device's values of every characteristic (no `Devices`, no `Characteristics`).
    var takesEveryValue: Bool { addresses == nil && characteristics == nil }

    func accepts(device: DeviceID, characteristic: String) -> Bool {
        (addresses?.contains(device.address) ?? true) && (characteristics?.contains(characteristic) ?? true)
    }

    func acceptsState(of device: DeviceID) -> Bool {
        states && (addresses?.contains(device.address) ?? true)
    }

    private static func strings(_ value: DBusValue, key: String) throws(DBusError) -> [String] {
        guard case .array(element: .string, let items) = value else { throw invalid("\(key) must be an array of strings (as)") }
        return items.compactMap { item in
            if case .string(let text) = item { return text }
            return nil
        }
    }

    private static func invalid(_ message: String) -> DBusError {
        DBusError(name: WearfleetControl.ErrorName.invalidFilter, message: message)
    }
}
