import BluetoothVocabulary
import DBus

// Typed, read-only views of mirrored objects. Each is a snapshot: properties are read once when
// the view is made, and an absent or mistyped property reads as nil.

/// An `org.bluez.Adapter1` object.
public struct BlueZAdapter: Sendable, Hashable {
    public let path: DBusObjectPath
    /// The kernel name (`hci0`): the last element of the path.
    public var name: String { path.lastElement }
    public let address: String?
    public let alias: String?
    public let powered: Bool
    public let discovering: Bool
    public let roles: [String]

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        address = try? properties.decodeIfPresent(String.self, forKey: "Address")
        alias = try? properties.decodeIfPresent(String.self, forKey: "Alias")
        // An adapter powering off is not counted as powered (see `isOn(powerState:)`).
        let state = try? properties.decodeIfPresent(String.self, forKey: "PowerState")
        powered = ((try? properties.decodeIfPresent(Bool.self, forKey: "Powered")) ?? false) && state.map(Self.isOn(powerState:)) != false
        discovering = (try? properties.decodeIfPresent(Bool.self, forKey: "Discovering")) ?? false
        roles = (try? properties.decodeIfPresent([String].self, forKey: "Roles")) ?? []
    }

    /// Whether an `Adapter1.PowerState` value means the adapter can be used: "on" only;
    /// "on-disabling" (powering off), "off", "off-enabling" and "off-blocked" (rfkill) cannot.
    public static func isOn(powerState: String) -> Bool { powerState == "on" }
}

/// An `org.bluez.Device1` object.
public struct BlueZDevice: Sendable, Hashable {
    public let path: DBusObjectPath
    /// The adapter object this device object belongs to.
    public let adapter: DBusObjectPath?
    public let address: String?
    /// `public` or `random`.
    public let addressType: String?
    /// Who the device is (`Address` plus `AddressType`, BlueZ's default `public` when the type is
    /// missing or unknown); nil when bluetoothd gives it no valid address.
    public let identity: DeviceID?
    /// The adapter this object belongs to, by kernel name: the `Adapter` property's last
    /// element, else the parent of the object's path (`/org/bluez/hci0/dev_…` → `hci0`).
    public var adapterID: AdapterID { AdapterID((adapter ?? path.parent ?? .root).lastElement) }
    public let name: String?
    public let alias: String?
    public let rssi: Int16?
    public let txPower: Int16?
    public let connected: Bool
    public let servicesResolved: Bool
    public let paired: Bool
    public let bonded: Bool
    public let trusted: Bool
    public let blocked: Bool
    /// Advertised or resolved service UUIDs, lower-case 128-bit as BlueZ reports them.
    public let uuids: [String]

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        adapter = try? properties.decodeIfPresent(DBusObjectPath.self, forKey: "Adapter")
        address = try? properties.decodeIfPresent(String.self, forKey: "Address")
        addressType = try? properties.decodeIfPresent(String.self, forKey: "AddressType")
        identity = DeviceID(bluezAddress: address, addressType: addressType)
        name = try? properties.decodeIfPresent(String.self, forKey: "Name")
        alias = try? properties.decodeIfPresent(String.self, forKey: "Alias")
        rssi = try? properties.decodeIfPresent(Int16.self, forKey: "RSSI")
        txPower = try? properties.decodeIfPresent(Int16.self, forKey: "TxPower")
        connected = (try? properties.decodeIfPresent(Bool.self, forKey: "Connected")) ?? false
        servicesResolved = (try? properties.decodeIfPresent(Bool.self, forKey: "ServicesResolved")) ?? false
        paired = (try? properties.decodeIfPresent(Bool.self, forKey: "Paired")) ?? false
        bonded = (try? properties.decodeIfPresent(Bool.self, forKey: "Bonded")) ?? false
        trusted = (try? properties.decodeIfPresent(Bool.self, forKey: "Trusted")) ?? false
        blocked = (try? properties.decodeIfPresent(Bool.self, forKey: "Blocked")) ?? false
        uuids = ((try? properties.decodeIfPresent([String].self, forKey: "UUIDs")) ?? []).map(\.lowercasedIfNeeded)
    }
}

/// An `org.bluez.GattService1` object.
public struct BlueZService: Sendable, Hashable {
    public let path: DBusObjectPath
    public let uuid: String?
    public let device: DBusObjectPath?
    public let primary: Bool

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        uuid = (try? properties.decodeIfPresent(String.self, forKey: "UUID")).map(\.lowercasedIfNeeded)
        device = try? properties.decodeIfPresent(DBusObjectPath.self, forKey: "Device")
        primary = (try? properties.decodeIfPresent(Bool.self, forKey: "Primary")) ?? false
    }
}

/// An `org.bluez.GattCharacteristic1` object.
public struct BlueZCharacteristic: Sendable, Hashable {
    public let path: DBusObjectPath
    public let uuid: String?
    public let service: DBusObjectPath?
    /// What it allows (`read`, `write`, `notify`, …), parsed from `Flags`.
    public let flags: GATTCharacteristicFlags
    public let notifying: Bool
    public let mtu: UInt16?
    /// Whether BlueZ offers the fd path (`AcquireNotify`, `AcquireWrite`) for it.
    public let notifyAcquired: Bool?
    public let writeAcquired: Bool?

    init(path: DBusObjectPath, properties: [String: DBusValue]) {
        self.path = path
        uuid = (try? properties.decodeIfPresent(String.self, forKey: "UUID")).map(\.lowercasedIfNeeded)
        service = try? properties.decodeIfPresent(DBusObjectPath.self, forKey: "Service")
        flags = GATTCharacteristicFlags(bluezFlags: (try? properties.decodeIfPresent([String].self, forKey: "Flags")) ?? [])
        notifying = (try? properties.decodeIfPresent(Bool.self, forKey: "Notifying")) ?? false
        mtu = try? properties.decodeIfPresent(UInt16.self, forKey: "MTU")
        notifyAcquired = try? properties.decodeIfPresent(Bool.self, forKey: "NotifyAcquired")
        writeAcquired = try? properties.decodeIfPresent(Bool.self, forKey: "WriteAcquired")
    }
}
