/// A simulated wearable with every value decided (address, name, adapter, rates, faults).
public struct WearableConfiguration: Sendable, Hashable {
    public var kind: WearableKind
    public var address: String
    public var addressType: String
    public var name: String
    public var rssi: Int
    public var txPower: Int
    /// The adapter that hears it best.
    public var adapter: String
    /// Every adapter that hears it, `adapter` first.
    public var heardBy: [String]
    public var bonded: Bool
    public var mtu: UInt16
    public var notifyHz: Double
    /// Motion band data notification size; 0 means MTU − 3.
    public var payloadSize: Int
    /// Motion band data notifications carry their send time.
    public var timestamps: Bool
    public var inRange: Bool
    public var faults: FaultSettings
    public var pairing: PairingMethod = .justWorks
    /// What a `passkey` device displays (0…999999).
    public var passkey: UInt32 = 123_456
    /// Indications of measurements and Current Time writes want an encrypted link.
    public var requiresEncryption = false
    /// When a measurement device sleeps and wakes; nil: always awake.
    public var wake: WakeSchedule?
    /// Measurements taken at each wake.
    public var records = 3
    /// The seed of this device's own random generator.
    public var seed: UInt64
}
