/// Every figure of one `fleet-bench` run; written as JSON and rendered as the table.

/// One receiver's figures in one ingest cell.
struct ReceiverFigures: Codable {
    var count: Int64
    var perSecond: Double
    /// CPU microseconds per notification.
    var cpuMicrosecondsEach: Double
    /// Notifications per CPU-second.
    var perCPUSecond: Double
    var p50Microseconds: Int64
    var p99Microseconds: Int64

    init(_ report: WindowReport) {
        count = report.count
        perSecond = report.perSecond
        cpuMicrosecondsEach = report.cpuEach
        perCPUSecond = report.perCPUSecond
        p50Microseconds = report.p50Microseconds
        p99Microseconds = report.p99Microseconds
    }
}

struct IngestCell: Codable {
    var devices: Int
    var rateHz: Double
    var payloadBytes: Int
    /// `dbus` (StartNotify, Value PropertiesChanged) or `fd` (AcquireNotify sockets).
    var path: String
    /// devices × rate.
    var offeredPerSecond: Double
    /// What the simulator managed to send (it shares the cores).
    var sentPerSecond: Double
    /// D-Bus rows: in the window shared with the floor alone.
    var wearfleet: ReceiverFigures
    /// D-Bus rows: `dbus-floor bluez-recv` on the same signals in the same window. fd rows:
    /// `fd-floor` on taps of the daemon's sockets (the same datagrams) in the same window.
    var floor: ReceiverFigures?
    /// D-Bus rows up to the bleak limit: bleak, and the daemon and the floor beside it, all three
    /// on the same signals in another window of the same cell.
    var bleak: ReceiverFigures?
    var wearfleetBesideBleak: ReceiverFigures?
    var floorBesideBleak: ReceiverFigures?
    var simulatorCPUPercent: Double
    /// dbus-daemon CPU per notification sent (it delivers each to every receiver subscribed).
    var busCPUMicrosecondsEach: Double

    /// Wearfleet's CPU per notification ÷ the floor's of the same path.
    var ratioToFloor: Double? { floor.map { wearfleet.cpuMicrosecondsEach / $0.cpuMicrosecondsEach } }
    /// Wearfleet's notifications per CPU-second ÷ bleak's, in the window they shared (fd rows have
    /// no bleak of their own: see `Report`).
    var ratioToBleak: Double? { bleak.map { (wearfleetBesideBleak ?? wearfleet).perCPUSecond / $0.perCPUSecond } }
}

struct IngestSetup: Codable {
    var devices: Int
    /// From start to every band subscribed, bleak connecting one after another.
    var bleakConnectSeconds: Double?
    /// From the agent's start to every band ready when bleak already holds the links.
    var wearfleetAdoptSeconds: Double?
    /// From the agent's start to every band ready on the fd path, connecting them itself.
    var wearfleetReadySeconds: Double?

    init(devices: Int) { self.devices = devices }
}

struct ScaleResult: Codable {
    var devices: Int
    var pinned: Int
    var rssKilobytes = 0
    var rssPerDeviceKilobytes: Double?
    var readySeconds = 0.0
    var allPinnedReadySeconds = 0.0
    /// From start until the daemon came to rest (the pool filled, what discovery brought
    /// worked off).
    var settledSeconds = 0.0
    /// Whether an adapter was still discovering at rest (a pool with room keeps searching).
    var discoveringAtRest = false
    var idleSeconds = 0.0
    var idleCPUPercent = 0.0
    var simulatorRSSKilobytes = 0
    var simulatorIdleCPUPercent = 0.0
    var stillRunning = true

    init(devices: Int, pinned: Int) {
        self.devices = devices
        self.pinned = pinned
    }
}

struct RecoveryResult: Codable {
    var devices: Int
    var adapters: Int
    var slotsPerAdapter: Int
    var coldStartSeconds = 0.0
    var coldStartMaxAttemptsInFlight = 0
    var bluetoothdDownSeconds = 0.0
    var restartToAllReadySeconds = 0.0
    var maxAttemptsInFlightPerAdapter: [String: Int] = [:]
    var connectAttempts = 0
    var promisedAttemptsInFlightPerAdapter = 1
    var promisedBoundSeconds = 0.0
    var lowerBoundSeconds = 0.0

    init(devices: Int, adapters: Int, slotsPerAdapter: Int) {
        self.devices = devices
        self.adapters = adapters
        self.slotsPerAdapter = slotsPerAdapter
    }

    /// Recovery measured from bluetoothd's return, the instant the bound counts from.
    var recoverySeconds: Double { restartToAllReadySeconds - bluetoothdDownSeconds }
}

struct WriteResult: Codable {
    var devices: Int
    var seconds: Double
    /// What drives the writes (see WriteSuite).
    var driver: String
    var writesPerSecond: Double
    var bytesPerSecond: Double
    var perDeviceMin: Int
    var perDeviceMax: Int
    /// min ÷ max of the writes each device received.
    var fairness: Double
    var queueCapacity: Int
    var deepestQueue: Int
    var refusedQueueFull: Int
    var receivedBySimulator: UInt64
    var driverCPUMicrosecondsEach: Double
}

/// A target of the issue and whether this run met it.
struct TargetCheck: Codable {
    var name: String
    var measured: String
    var target: String
    var met: Bool
    /// For a ratio between receivers: the same ratio with the C floors in their places, in the
    /// cell where it is lowest. Below the target, no receiver meets it on this machine.
    var floors: String?
}

extension BenchResults {
    /// An fd row's ratios to the D-Bus row of the same devices, rate and size: notifications per
    /// CPU-second ÷ the D-Bus path's, and ÷ bleak's (bleak has no fd path: its D-Bus figure).
    /// Nil for a D-Bus row, or an fd row without its D-Bus twin.
    func fdRatios(_ cell: IngestCell) -> (overDBus: Double, overBleak: Double?)? {
        guard cell.path == "fd", let twin = dbusTwin(of: cell) else { return nil }
        let perCPUSecond = cell.wearfleet.perCPUSecond
        return (perCPUSecond / twin.wearfleet.perCPUSecond, twin.bleak.map { perCPUSecond / $0.perCPUSecond })
    }

    /// A row's ratios between receivers with the C floors in the daemon's place: the fd floor's
    /// notifications per CPU-second ÷ the D-Bus floor's and ÷ bleak's (fd rows), the D-Bus floor's
    /// beside bleak ÷ bleak's (D-Bus rows). What a receiver that only counts reaches in the same
    /// windows: a target above it is out of reach for any receiver here, not just the daemon.
    func floorRatios(_ cell: IngestCell) -> (overDBus: Double?, overBleak: Double?) {
        guard cell.path == "fd" else {
            guard let floor = cell.floorBesideBleak, let bleak = cell.bleak else { return (nil, nil) }
            return (nil, floor.perCPUSecond / bleak.perCPUSecond)
        }
        guard let floor = cell.floor, let twin = dbusTwin(of: cell) else { return (nil, nil) }
        return (twin.floor.map { floor.perCPUSecond / $0.perCPUSecond }, twin.bleak.map { floor.perCPUSecond / $0.perCPUSecond })
    }

    /// The D-Bus row of the same devices, rate and size as `cell`.
    private func dbusTwin(of cell: IngestCell) -> IngestCell? {
        ingest.first {
            $0.path == "dbus" && $0.devices == cell.devices && $0.rateHz == cell.rateHz && $0.payloadBytes == cell.payloadBytes
        }
    }
}

struct BenchResults: Codable {
    var timeScale: Double
    var attemptInterval: String
    var ingest: [IngestCell] = []
    var ingestSetup: [IngestSetup] = []
    var scale: [ScaleResult] = []
    var recovery: RecoveryResult?
    var writes: WriteResult?
    var commands: CommandResult?
    var mqtt: MQTTBenchResult?
    var watch: [WatchCell] = []
    var churn: ChurnResult?
    var cluster: ClusterResult?
    var targets: [TargetCheck] = []
    /// Sections that failed, with why (the others still ran).
    var failures: [String] = []
    var secondsTotal = 0.0
}

/// Section 9: several gateways sharing one fleet through one broker (`ClusterSuite`).
struct ClusterResult: Codable {
    var devices: Int
    var gateways: Int
    /// From starting the three gateways to every strap `ready` on its owner.
    var coldStartSeconds = 0.0
    /// Claims, bids and heartbeats per device per minute, over `restSeconds` at rest.
    var messagesPerDeviceMinute = 0.0
    var restSeconds = 0.0
    /// For each strap of a gateway that lost power, from the kill to its `ready` elsewhere.
    var handoffSeconds: [Double] = []
    /// Links that came up while another gateway's link to the same strap was up (must be 0).
    var doubleLinks = 0
    /// Connects that found the strap held by another gateway (refused by the world).
    var connectsRefusedHeldElsewhere = 0
}

/// Section 8: passers-by streamed through discovery (`ChurnSuite`).
struct ChurnResult: Codable {
    struct Sample: Codable {
        /// Since the daemon started.
        var seconds: Double
        var rssKilobytes: Int
        /// Passers-by that had come, and that bluez-sim had forgotten again, by then.
        var arrived: Int
        var gone: Int
    }

    var devices: Int
    var seconds: Double
    /// The daemon at rest before the first passer-by.
    var startRSSKilobytes = 0
    var peakRSSKilobytes = 0
    /// The daemon at rest after the last passer-by's object expired.
    var endRSSKilobytes = 0
    var samples: [Sample] = []
    /// The daemon's CPU over the stream.
    var streamCPUPercent = 0.0
    var streamSeconds = 0.0
    var pinnedStillReady = false

    var growthKilobytes: Int { endRSSKilobytes - startRSSKilobytes }
}
