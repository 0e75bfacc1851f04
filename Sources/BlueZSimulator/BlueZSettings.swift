/// The bluetoothd settings a scenario can change (`main.conf` and the command line). Every key is
/// optional: absent ones keep what Debian 12's bluetoothd (BlueZ 5.66) does with its stock
/// `main.conf`, so a scenario says so when it wants anything else.
public struct BlueZSettings: Codable, Sendable, Hashable {
    /// `bluetoothd --experimental` (or `Experimental = true`): experimental D-Bus methods such as
    /// `Adapter1.ConnectDevice` are offered. Stock: false, and a call to one is answered
    /// `org.freedesktop.DBus.Error.UnknownMethod`, as for a method that does not exist.
    public var experimental: Bool?
    /// `[GATT] Cache`: which devices keep their GATT objects exported after a disconnect.
    public var gattCache: GATTCache?

    public init(experimental: Bool? = nil, gattCache: GATTCache? = nil) {
        self.experimental = experimental
        self.gattCache = gattCache
    }

    /// `main.conf`'s `[GATT] Cache` values (`src/device.c`, `gatt_cache_is_enabled`).
    public enum GATTCache: String, Codable, Sendable, Hashable {
        /// Every device keeps its attribute database (and its GATT objects) while its Device1
        /// object exists. Stock default.
        case always
        /// Only paired devices keep it.
        case yes
        /// Nobody keeps it: the GATT objects go with every link.
        case no
    }

    var experimentalEnabled: Bool { experimental ?? false }
    var cache: GATTCache { gattCache ?? .always }
}
