/// One simulated wearable as a scenario describes it. Everything but `kind` is optional and
/// derived from the seed when absent.
public struct DeviceSpec: Codable, Sendable, Hashable {
    public var kind: WearableKind
    /// Expands this entry into `count` devices (names get a number, addresses are generated).
    public var count: Int?
    public var address: String?
    /// `public` or `random`.
    public var addressType: String?
    public var name: String?
    /// Mean RSSI in dBm while advertising.
    public var rssi: Int?
    public var txPower: Int?
    /// The adapter that hears it best (its RSSI there is `rssi`; each further adapter in
    /// `heardBy` hears it 6 dB weaker); round-robin over the adapters when absent.
    public var adapter: String?
    /// The adapters that hear it, each with a Device1 object of its own; absent: every adapter
    /// (adapters in one gateway share its radio neighbourhood). `["hci1"]` keeps it to one.
    public var heardBy: [String]?
    /// In a shared world (`Scenario.world`): the gateways that hear the device, each with the
    /// mean RSSI its best adapter reads (further adapters of that gateway 6 dB less); a gateway
    /// not named does not hear it. Absent: every gateway, at `rssi`. Ignored outside a world.
    public var heardByGateways: [String: Int]?
    /// Bonded devices are known at start (cached) and never expire.
    public var bonded: Bool?
    public var mtu: Int?
    /// Motion band streaming rate (50–200 Hz).
    public var notifyHz: Double?
    /// Motion band data notification size in bytes; absent or 0: the largest that fits (MTU − 3).
    public var payloadSize: Int?
    /// Motion band data notifications carry their send time (see `WearableSignals`), so a
    /// receiver can measure latency. Default false.
    public var timestamps: Bool?
    public var inRange: Bool?
    public var faults: FaultSettings?
    /// How it pairs (default `justWorks`), and the passkey a `passkey` device displays
    /// (default 123456).
    public var pairing: PairingMethod?
    public var passkey: UInt32?
    /// The measurement characteristics' indications and the Current Time write want an encrypted
    /// link (the device answers Insufficient Authentication until the link is encrypted). Default:
    /// true for a blood-pressure cuff and a weight scale, false otherwise (no other kind has such
    /// characteristics).
    public var requiresEncryption: Bool?
    /// A measurement device that sleeps between measurements and wakes on this schedule (and on
    /// demand). Absent: it is always awake and measures only on demand.
    public var wake: WakeSchedule?
    /// How many measurements a measurement device takes at each wake (default 3).
    public var records: Int?

    public init(
        kind: WearableKind, count: Int? = nil, address: String? = nil, addressType: String? = nil, name: String? = nil,
        rssi: Int? = nil, txPower: Int? = nil, adapter: String? = nil, bonded: Bool? = nil, mtu: Int? = nil,
        notifyHz: Double? = nil, inRange: Bool? = nil, faults: FaultSettings? = nil, payloadSize: Int? = nil,
        timestamps: Bool? = nil, heardBy: [String]? = nil, pairing: PairingMethod? = nil, passkey: UInt32? = nil,
        requiresEncryption: Bool? = nil, wake: WakeSchedule? = nil, records: Int? = nil, heardByGateways: [String: Int]? = nil
    ) {
        self.heardByGateways = heardByGateways
        self.requiresEncryption = requiresEncryption
        self.wake = wake
        self.records = records
        self.pairing = pairing
        self.passkey = passkey
        self.heardBy = heardBy
        self.kind = kind
        self.count = count
        self.address = address
        self.addressType = addressType
        self.name = name
        self.rssi = rssi
        self.txPower = txPower
        self.adapter = adapter
        self.bonded = bonded
        self.mtu = mtu
        self.notifyHz = notifyHz
        self.inRange = inRange
        self.faults = faults
        self.payloadSize = payloadSize
        self.timestamps = timestamps
    }
}
