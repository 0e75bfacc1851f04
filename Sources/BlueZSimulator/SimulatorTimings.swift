/// How long simulated radio work takes, in seconds of simulated time.
///
/// Every delay the simulator waits for comes from here, multiplied by `timeScale`, so tests run
/// with millisecond latencies while a demonstration uses a gateway's real ones. The defaults are
/// realistic figures for a Raspberry Pi class gateway.
public struct SimulatorTimings: Codable, Sendable, Hashable {
    /// From `Connect` to `Connected=true`.
    public var connectLatency: Double = 0.3
    /// How long a connection attempt to a device out of range lasts before it fails.
    public var connectTimeout: Double = 5
    /// From `Connected=true` to `ServicesResolved=true` (GATT discovery).
    public var resolveDelay: Double = 0.8
    /// How long an unbonded, disconnected device object survives without being seen.
    public var temporaryTimeout: Double = 30
    /// Between advertisements seen while discovering (device appearance, RSSI updates).
    public var advertisingInterval: Double = 1
    /// A write with response's round trip.
    public var writeLatency: Double = 0.03
    /// A `Pair` on a connected device.
    public var pairLatency: Double = 0.5
    /// Between heart-rate notifications (~1 Hz, the rate straps use).
    public var heartRateInterval: Double = 1
    /// Between slow measurements (temperature, SpO2).
    public var slowMeasurementInterval: Double = 1
    /// How long bluetoothd stays away on a simulated restart when the fault gives no delay.
    public var restartDelay: Double = 2
    /// How long Linux keeps an LE link whose last user went (the ATT socket of a bluetoothd that
    /// was killed) before it ends the link itself: measured 2 s on Linux 6.1 with bluetoothd 5.66
    /// killed by SIGKILL (a restarted bluetoothd first reports such a link connected).
    public var leftBehindLinkTimeout: Double = 2
    /// How long a `Connect` to a device that sleeps waits for it before it fails
    /// `le-connection-abort-by-local`: Linux connects an LE device by passive scanning and gives up
    /// after the socket's connect timeout (`L2CAP_CONN_TIMEOUT`, 40 s; measured ~40 s on Linux 6.1
    /// with bluetoothd 5.66).
    public var pendingConnectTimeout: Double = 40
    /// Between two indications of a measurement device's queued records (each waits for the
    /// confirmation of the last).
    public var recordInterval: Double = 0.1
    /// How long a measurement device that sleeps keeps the link after its last record was
    /// confirmed before it disconnects itself (measured 2 s with the real devices).
    public var deviceDisconnectDelay: Double = 2
    /// From a bonded link's `Connected` to bluetoothd's re-enabling of the notify sessions that
    /// outlived the last link (measured ~0.3 s on bluetoothd 5.66).
    public var notifyResumeDelay: Double = 0.3
    /// How long after a `Pair` ends bluetoothd starts again the discovery it stopped for it
    /// (`resume_discovery`: `IDLE_DISCOV_TIMEOUT`, 5 s, src/adapter.c of BlueZ 5.66; a
    /// `StartDiscovery` after a stop starts it at once).
    public var discoveryResumeDelay: Double = 5
    /// Multiplies every delay above (0.1 runs ten times faster).
    public var timeScale: Double = 1

    public init() {}

    /// Millisecond latencies for tests: everything happens quickly, but still in the same order
    /// and with the same interleavings a real gateway shows.
    public static var fast: SimulatorTimings {
        var timings = SimulatorTimings()
        timings.connectLatency = 0.02
        timings.connectTimeout = 0.2
        timings.resolveDelay = 0.02
        timings.temporaryTimeout = 0.5
        timings.advertisingInterval = 0.05
        timings.writeLatency = 0.01
        timings.pairLatency = 0.02
        timings.heartRateInterval = 0.05
        timings.slowMeasurementInterval = 0.05
        timings.restartDelay = 0.2
        // Well after `restartDelay`, as on a gateway where bluetoothd comes back at once: the
        // restarted simulator reports the links left behind before they end.
        timings.leftBehindLinkTimeout = 1
        timings.pendingConnectTimeout = 2
        timings.recordInterval = 0.01
        timings.deviceDisconnectDelay = 0.1
        timings.notifyResumeDelay = 0.02
        timings.discoveryResumeDelay = 0.25
        return timings
    }

    /// `seconds` of simulated time as a real duration.
    func duration(_ seconds: Double) -> Duration {
        .nanoseconds(Int64(max(0, seconds * timeScale) * 1e9))
    }

    enum CodingKeys: String, CodingKey {
        case connectLatency, connectTimeout, resolveDelay, temporaryTimeout, advertisingInterval, writeLatency
        case pairLatency, heartRateInterval, slowMeasurementInterval, restartDelay, leftBehindLinkTimeout, timeScale
        case pendingConnectTimeout, recordInterval, deviceDisconnectDelay, notifyResumeDelay, discoveryResumeDelay
    }

    /// Every key is optional in a scenario file: missing ones keep their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys, _ fallback: Double) throws -> Double {
            try c.decodeIfPresent(Double.self, forKey: key) ?? fallback
        }
        let d = SimulatorTimings()
        connectLatency = try value(.connectLatency, d.connectLatency)
        connectTimeout = try value(.connectTimeout, d.connectTimeout)
        resolveDelay = try value(.resolveDelay, d.resolveDelay)
        temporaryTimeout = try value(.temporaryTimeout, d.temporaryTimeout)
        advertisingInterval = try value(.advertisingInterval, d.advertisingInterval)
        writeLatency = try value(.writeLatency, d.writeLatency)
        pairLatency = try value(.pairLatency, d.pairLatency)
        heartRateInterval = try value(.heartRateInterval, d.heartRateInterval)
        slowMeasurementInterval = try value(.slowMeasurementInterval, d.slowMeasurementInterval)
        restartDelay = try value(.restartDelay, d.restartDelay)
        leftBehindLinkTimeout = try value(.leftBehindLinkTimeout, d.leftBehindLinkTimeout)
        pendingConnectTimeout = try value(.pendingConnectTimeout, d.pendingConnectTimeout)
        recordInterval = try value(.recordInterval, d.recordInterval)
        deviceDisconnectDelay = try value(.deviceDisconnectDelay, d.deviceDisconnectDelay)
        notifyResumeDelay = try value(.notifyResumeDelay, d.notifyResumeDelay)
        discoveryResumeDelay = try value(.discoveryResumeDelay, d.discoveryResumeDelay)
        timeScale = try value(.timeScale, d.timeScale)
    }
}
