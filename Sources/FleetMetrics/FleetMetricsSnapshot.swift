import Fleet
import FleetCore

/// What a scrape reads from the orchestrator before rendering: its status, and each device's
/// write figures (the write path keeps them; the recorder turns them into series).
public struct FleetMetricsSnapshot: Sendable {
    public struct DeviceWrites: Sendable {
        public var counters: WriteCounters
        public var queueDepths: [OutgoingQoS: Int]

        public init(counters: WriteCounters = WriteCounters(), queueDepths: [OutgoingQoS: Int] = [:]) {
            self.counters = counters
            self.queueDepths = queueDepths
        }
    }

    public var status: FleetStatus
    public var writes: [DeviceID: DeviceWrites]

    public init(status: FleetStatus, writes: [DeviceID: DeviceWrites] = [:]) {
        self.status = status
        self.writes = writes
    }

    /// Asks the orchestrator: one `status()`, then `writeStatus` per device.
    public static func take(from orchestrator: FleetOrchestrator) async -> FleetMetricsSnapshot {
        let status = await orchestrator.status()
        var writes: [DeviceID: DeviceWrites] = [:]
        for device in status.devices {
            let (counters, depths) = await orchestrator.writeStatus(device.id)
            writes[device.id] = DeviceWrites(counters: counters, queueDepths: depths)
        }
        return FleetMetricsSnapshot(status: status, writes: writes)
    }
}
