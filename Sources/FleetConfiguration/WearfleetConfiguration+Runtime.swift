import TOML
import FleetCore

extension WearfleetConfiguration {
    /// What the orchestrator runs with: the file's settings mapped onto the runtime's types.
    public var runtimeConfiguration: FleetRuntimeConfiguration {
        var runtime = FleetRuntimeConfiguration(
            pinned: pinned.map {
                FleetRuntimeConfiguration.PinnedDevice(
                    id: $0.id, name: $0.name, className: $0.className, priority: $0.priority,
                    definedAt: "\($0.definedAt.file):\($0.definedAt.line)")
            },
            classes: stateMachineConfigurations,
            poolClassName: pool.defaultClass,
            poolEnabled: pool.enabled,
            poolServiceFilter: Set(pool.services.map(\.description)),
            pool: poolConfiguration,
            reconnect: reconnectPolicy,
            adapters: Set(fleet.adapters),
            scanUUIDs: fleet.scanServices.map(\.description),
            minimumRSSI: Int16(clamping: fleet.minimumRSSI),
            disconnectOnStop: daemon.disconnectOnStop)
        runtime.poolAdmission = pool.admission(fleetMinimumRSSI: fleet.minimumRSSI)
        runtime.writes = classes.mapValues {
            FleetRuntimeConfiguration.WriteSettings(options: $0.outgoingDeviceOptions, defaultQoS: $0.defaultQoS)
        }
        return runtime
    }
}
