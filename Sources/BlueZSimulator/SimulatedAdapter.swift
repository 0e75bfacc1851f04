import DBus

/// Run-time state of one simulated controller, owned by `BlueZSimulator`.
struct SimulatedAdapter {
    var configuration: AdapterConfiguration
    var path: DBusObjectPath
    var powered: Bool
    /// Clients (unique bus names) that called StartDiscovery and not yet StopDiscovery.
    var discoveryClients: Set<String> = []
    /// Each client's SetDiscoveryFilter, kept as BlueZ keeps them (validated, merged on use).
    var discoveryFilters: [String: [String: DBusValue]] = [:]
    var discoveryTask: Task<Void, Never>?
    /// When the discovery loop started its last whole pass over the devices in range (nil
    /// until the first pass of a discovery ends): every device heard in it was heard since. While the adapter discovers,
    /// a temporary object expires by this clock rather than the wall clock: a process starved of
    /// CPU wakes its sweep and its discovery loop together, and the sweep must not count the time
    /// the loop could not run as time the device went unheard.
    var lastDiscoveryPass: ContinuousClock.Instant?
    /// A `stall-discovery` fault: the discovery (running, or the next one) reports nothing until
    /// it ends.
    var discoveryStalled = false
    /// Connection attempts in flight now.
    var attemptsInFlight = 0
    /// `Pair` calls in flight through this adapter: bluetoothd 5.66 stops its discovery for
    /// them (`adapter_create_bonding` → `suspend_discovery`); `Discovering` stays true and
    /// nothing is reported.
    var pairingsInFlight = 0
    /// After the last of them ended, when bluetoothd starts the discovery again
    /// (`resume_discovery`, `discoveryResumeDelay` later); nil: not waiting. A discovery stopped
    /// and started by its clients meanwhile scans at once.
    var discoveryResumesAt: ContinuousClock.Instant?

    /// Whether a discovery running now reports what it hears.
    func discoverySuspended(at now: ContinuousClock.Instant) -> Bool {
        pairingsInFlight > 0 || discoveryResumesAt.map { now < $0 } ?? false
    }

    init(configuration: AdapterConfiguration) throws {
        self.configuration = configuration
        path = try DBusObjectPath("/org/bluez/" + configuration.name)
        powered = configuration.powered
    }
}
