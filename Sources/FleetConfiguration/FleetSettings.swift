import TOML
import FleetCore
import GATT

/// `[fleet]`: the adapters and the connection budget shared by pinned and pool devices.
public struct FleetSettings: Equatable, Sendable {
    /// Adapters to use; empty means every adapter BlueZ reports.
    public var adapters: [AdapterID] = []
    /// Total links (connected plus attempts in flight). Default 8.
    public var maxConnections: Int = 8
    /// Connection slots of an adapter without an entry in `adapterSlots`. Default 5.
    public var slotsPerAdapter: Int = 5
    public var adapterSlots: [AdapterID: Int] = [:]
    /// Discovery filter; empty means every advertising LE device.
    public var scanServices: [BluetoothUUID] = []
    /// Advertisements weaker than this (dBm) are ignored. Default -90.
    public var minimumRSSI: Int = -90
    /// Fleet-wide connection attempt pacing: `attemptBurst` back to back, then one per
    /// `attemptInterval`. Defaults 4 and 250 ms.
    public var attemptBurst: Int = 4
    public var attemptInterval: Duration = .milliseconds(250)

    public init() {}
}
