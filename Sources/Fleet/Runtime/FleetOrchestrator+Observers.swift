import FleetCore

/// Someone who wants to hear what the fleet does as it happens (metrics, a live view) without
/// being able to change it: a consumer of the fleet's `FleetEvent`s. Register with
/// `FleetOrchestrator.addObserver(_:)` before `start()`, so that every device is announced with
/// `deviceAdded` before its first event. Figures the fleet already keeps (value and write counts,
/// queue depths) are read from `status()` and `writeStatus(_:)` instead.
///
/// Called synchronously on the orchestrator's actor, in the order things happened:
/// implementations must be quick and never block (take a lock, update a number, return).
public protocol FleetObserver: Sendable {
    func observe(_ event: FleetEvent)
}

extension FleetOrchestrator {
    /// Adds an observer of fleet events. Call before `start()` so it hears every device join.
    public func addObserver(_ observer: any FleetObserver) {
        observers.append(observer)
    }
}
