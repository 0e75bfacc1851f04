import FleetCore
import FoundationEssentials

/// What the daemon remembers about one device across restarts: who it is, where it was last
/// seen, what it offered, and whether it is pinned or in the dynamic pool.
///
/// Identity is `id` (address + address type), never a BlueZ object path, so the record survives
/// bluetoothd restarts and adapter renumbering. `servicesSeen` is always sorted and free of
/// duplicates, so equal knowledge compares equal and encodes to the same bytes.
public struct KnownDevice: Hashable, Sendable {
    /// Whether the device is kept connected unconditionally or competes for a pool slot.
    public enum Membership: String, Hashable, Sendable, Codable, CaseIterable {
        case pinned
        case pool
    }

    public var id: DeviceID
    /// The adapter the device was last connected through.
    public var adapter: AdapterID?
    /// BlueZ's `Name` (or `Alias`) when last seen.
    public var name: String?
    /// BlueZ's `Class` (Class of Device; mostly absent for LE-only devices).
    public var deviceClass: UInt32?
    /// BlueZ's `Appearance` (the LE counterpart of `Class`).
    public var appearance: UInt16?
    /// Every GATT service UUID ever seen on the device.
    public var servicesSeen: [String] {
        didSet { servicesSeen = Self.normalized(servicesSeen) }
    }
    /// Wall-clock time the device last reached `ready`.
    public var lastConnected: Date?
    /// Wall-clock time the daemon last had the device: it reached `ready`, taught the daemon
    /// something, or its link ended. What `forget_after` counts from (`lastConnected` for a
    /// record written before this was kept).
    public var lastSeen: Date?
    public var membership: Membership

    public init(
        id: DeviceID,
        adapter: AdapterID? = nil,
        name: String? = nil,
        deviceClass: UInt32? = nil,
        appearance: UInt16? = nil,
        servicesSeen: [String] = [],
        lastConnected: Date? = nil,
        lastSeen: Date? = nil,
        membership: Membership = .pool
    ) {
        self.id = id
        self.adapter = adapter
        self.name = name
        self.deviceClass = deviceClass
        self.appearance = appearance
        self.servicesSeen = Self.normalized(servicesSeen)
        self.lastConnected = lastConnected
        self.lastSeen = lastSeen
        self.membership = membership
    }

    /// Lower-case, sorted, unique: BlueZ spells UUIDs in lower case, config files may not.
    static func normalized(_ services: [String]) -> [String] {
        Array(Set(services.map { $0.lowercased() })).sorted()
    }
}
