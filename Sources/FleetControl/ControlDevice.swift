/// One device as the control interface reports it (`ListDevices`, `GetDevice`).
///
/// Optional fields are nil when the daemon does not know them (no name advertised, no link, no
/// value decoded yet); readers show them as "-".
public struct ControlDevice: Sendable, Hashable {
    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    public var name: String?
    /// Pinned devices are always pursued; the others belong to the dynamic pool.
    public var pinned: Bool
    /// The configured device class (`[classes.NAME]`).
    public var className: String?
    /// One of `idle`, `resolving`, `connecting`, `discovering`, `ready`, `degraded`,
    /// `backingOff`, `suspended`.
    public var state: String
    /// Why a device is `degraded` or `suspended` (`writesFailing`, `gaveUp(denied)`, …).
    public var stateReason: String?
    /// The retry number a `backingOff` device waits for.
    public var retryAttempt: UInt32?
    /// Seconds until the next attempt may start (`backingOff`, or `suspended` until a deadline).
    public var nextAttemptIn: Double?
    /// The adapter of the link or of the attempt in flight.
    public var adapter: String?
    public var rssi: Int16?
    /// The last decoded value, one line (`72 bpm, RR 812 ms`).
    public var lastValue: String?
    /// When the last value arrived, in seconds since 1970 (UTC): for a device that sleeps between
    /// measurements, when it last measured.
    public var lastValueTime: Double?
    /// Connection attempts granted so far.
    public var sessions: UInt64
    /// Links made after the first one.
    public var reconnects: UInt64
    /// Values received (notifications, indications and reads).
    public var notifications: UInt64
    /// Values that did not decode.
    public var decodeErrors: UInt64
    /// The class of the most recent failure (`transient`, `outOfSlots`, `denied`, …), kept after
    /// the device recovered.
    public var lastError: String?
    /// The gateway that owns the device when several gateways share the fleet (`[cluster]`).
    public var owner: String?

    public init(
        address: String, addressType: String = "public", name: String? = nil, pinned: Bool, className: String? = nil,
        state: String, stateReason: String? = nil, retryAttempt: UInt32? = nil, nextAttemptIn: Double? = nil,
        adapter: String? = nil, rssi: Int16? = nil, lastValue: String? = nil, sessions: UInt64 = 0, reconnects: UInt64 = 0,
        notifications: UInt64 = 0, decodeErrors: UInt64 = 0, lastError: String? = nil, lastValueTime: Double? = nil,
        owner: String? = nil
    ) {
        self.lastValueTime = lastValueTime
        self.owner = owner
        self.address = address
        self.addressType = addressType
        self.name = name
        self.pinned = pinned
        self.className = className
        self.state = state
        self.stateReason = stateReason
        self.retryAttempt = retryAttempt
        self.nextAttemptIn = nextAttemptIn
        self.adapter = adapter
        self.rssi = rssi
        self.lastValue = lastValue
        self.sessions = sessions
        self.reconnects = reconnects
        self.notifications = notifications
        self.decodeErrors = decodeErrors
        self.lastError = lastError
    }
}
