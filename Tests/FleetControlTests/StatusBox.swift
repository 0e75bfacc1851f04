import Fleet
import Synchronization

/// A fleet status a test can change while the interface serves it.
final class StatusBox: Sendable {
    private let value: Mutex<FleetStatus>

    init(_ status: FleetStatus) { value = Mutex(status) }

    func get() -> FleetStatus { value.withLock { $0 } }

    func set(_ status: FleetStatus) { value.withLock { $0 = status } }
}
