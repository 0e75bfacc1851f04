/// A discovery filter as `Adapter1.SetDiscoveryFilter` takes it (empty UUIDs: any device).
public struct DiscoveryFilter: Sendable, Hashable, Codable {
    public var uuids: [String]
    public var minimumRSSI: Int16?

    public init(uuids: [String], minimumRSSI: Int16?) {
        self.uuids = uuids
        self.minimumRSSI = minimumRSSI
    }

    /// Any device, however weak: what a missing pinned or restored device is looked for with.
    public static let anyDevice = DiscoveryFilter(uuids: [], minimumRSSI: nil)
}

/// One call of BlueZ's discovery API on one adapter.
public enum DiscoveryCall: Sendable, Hashable, Codable {
    case setFilter(DiscoveryFilter)
    case start
    case stop

    /// BlueZ's method name (for logs).
    public var methodName: String {
        switch self {
        case .setFilter: "SetDiscoveryFilter"
        case .start: "StartDiscovery"
        case .stop: "StopDiscovery"
        }
    }
}

/// One adapter's discovery as the fleet machine drives it: what bluetoothd last accepted from
/// the daemon (running, with which filter), the one call in flight, and the backoff after a
/// failed call. The fleet machine is its only writer; the executor carries out the calls it
/// asks for and reports each outcome back as an input, so no decision waits on bluetoothd.
///
/// Guarantees:
/// - At most one call is in flight per adapter; a result is applied only to the call it answers
///   (`number`), so a late answer after bluetoothd or the adapter went changes nothing.
/// - A failed call is retried after a jittered, doubling delay (`retryDelay`); nothing is asked
///   before then.
public struct AdapterDiscovery: Sendable, Hashable {
    /// bluetoothd accepted `StartDiscovery` from the daemon (or answered it already runs).
    public internal(set) var running = false
    /// The filter bluetoothd last accepted (nil: none since discovery was last stopped or reset).
    public internal(set) var appliedFilter: DiscoveryFilter?
    /// The call waiting for bluetoothd's answer (nil: none), and the number it was sent under.
    public internal(set) var inFlight: DiscoveryCall?
    public internal(set) var inFlightNumber: UInt64 = 0
    /// Failed calls since the adapter was first seen (status, metrics).
    public internal(set) var failures = 0
    /// Failed calls in a row: the backoff's exponent.
    public internal(set) var consecutiveFailures = 0
    /// The last failure, and how many times in a row it was that one (what the journal counts).
    public internal(set) var lastFailure: DeviceEvent.Failure?
    public internal(set) var sameFailureInARow = 0
    /// No call before this instant (a failed call's backoff).
    public internal(set) var retryAt: MonotonicInstant?
    /// A search has run `searchRefreshInterval`: discovery is stopped and started again.
    public internal(set) var restartRequested = false

    /// Backoff after the first failed call, doubled per failure in a row up to `maximumRetryDelay`.
    public static let firstRetryDelay: Duration = .seconds(1)
    public static let maximumRetryDelay: Duration = .seconds(60)

    public init() {}

    /// bluetoothd or the adapter went (power off, removed): discovery ended with it, and an
    /// answer still on its way is for a discovery that is no more.
    mutating func reset() {
        running = false
        restartRequested = false
        startedAt = nil
        appliedFilter = nil
        inFlight = nil
        consecutiveFailures = 0
        lastFailure = nil
        sameFailureInARow = 0
        retryAt = nil
    }

    /// When bluetoothd last accepted `StartDiscovery` (nil while discovery is off).
    public internal(set) var startedAt: MonotonicInstant?

    /// How long a search for a missing device runs before discovery is stopped and started
    /// again. On Linux 6.1 with bluetoothd 5.66 an adapter was seen with `Discovering` true for
    /// minutes while its controller no longer scanned: the kernel paused the scan for an LE
    /// connection attempt and neither resumed it nor told bluetoothd discovery had stopped (HCI
    /// trace: no LE Set Scan Enable and no MGMT Discovering event after the connection; NOTES.md,
    /// "The real stack"), so a device advertising next to it was never found. A fresh
    /// `StartDiscovery` makes bluetoothd start the kernel's discovery anew, as mature BlueZ
    /// clients' scanner watchdogs do. Well inside the resolve timeout (30 s by default), so a
    /// stalled scan costs a search seconds, not a `gone` failure.
    public static let searchRefreshInterval: Duration = .seconds(10)

    /// Asks for discovery to be stopped and started again, when it runs.
    mutating func requestRestart() {
        if running { restartRequested = true }
    }

    /// The call that brings discovery closer to `wanted` (nil: off), or nil when none is due: one
    /// is in flight, a backoff runs, or discovery is as wanted. A filter is set before discovery
    /// starts, and a running discovery takes a new filter without a restart (bluetoothd applies
    /// it at once).
    mutating func nextCall(wanted: DiscoveryFilter?, now: MonotonicInstant, number: UInt64) -> DiscoveryCall? {
        guard inFlight == nil else { return nil }
        let call: DiscoveryCall
        switch (wanted, running) {
        case (.some, true) where restartRequested: call = .stop
        case (let filter?, _) where appliedFilter != filter: call = .setFilter(filter)
        case (.some, false): call = .start
        case (nil, true): call = .stop
        default:
            // As wanted: a backoff still running is for a call nobody needs any more.
            retryAt = nil
            return nil
        }
        if let retryAt, now < retryAt { return nil }
        inFlight = call
        inFlightNumber = number
        return call
    }

    /// What became of a call: applied when it is the call in flight (true), else ignored.
    /// `InProgress` to `StartDiscovery` means it already runs for the daemon; a refused
    /// `StopDiscovery` (`Failed` "No discovery started", `NotReady` while powered off) means
    /// there is none to stop. Any other failure backs off, `random` jitters the delay.
    mutating func finished(
        number: UInt64, failure: DeviceEvent.Failure?, now: MonotonicInstant, random: inout some RandomNumberGenerator
    ) -> Bool {
        guard let call = inFlight, number == inFlightNumber else { return false }
        inFlight = nil
        switch (call, failure?.kind) {
        case (.setFilter(let filter), nil):
            appliedFilter = filter
        case (.start, nil), (.start, .inProgress):
            running = true
            startedAt = now
        case (.stop, nil), (.stop, .failed), (.stop, .notReady):
            running = false
            restartRequested = false
            startedAt = nil
            appliedFilter = nil
        default:
            failures += 1
            consecutiveFailures += 1
            sameFailureInARow = failure == lastFailure ? sameFailureInARow + 1 : 1
            lastFailure = failure
            retryAt = now.advanced(by: Self.retryDelay(afterFailures: consecutiveFailures, random: &random))
            return true
        }
        consecutiveFailures = 0
        lastFailure = nil
        sameFailureInARow = 0
        retryAt = nil
        return true
    }

    /// The backoff of discovery calls: reconnect's jittered doubling (half to all of 1 s × 2^(n−1),
    /// at most 60 s), so adapters that failed together do not retry together.
    static func retryDelay(afterFailures failures: Int, random: inout some RandomNumberGenerator) -> Duration {
        backoff.backoffDelay(attempt: failures, random: &random)
    }

    private static let backoff = ReconnectController(policy: ReconnectPolicy(baseDelay: firstRetryDelay, maxDelay: maximumRetryDelay))
}
