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
    /// A `stall-discovery` fault: the discovery (running, or the next one) reports nothing until
    /// it ends.
    var discoveryStalled = false
    /// Connection attempts in flight now.
    var attemptsInFlight = 0

    init(configuration: AdapterConfiguration) throws {
        self.configuration = configuration
        path = try DBusObjectPath("/org/bluez/" + configuration.name)
        powered = configuration.powered
    }
}
