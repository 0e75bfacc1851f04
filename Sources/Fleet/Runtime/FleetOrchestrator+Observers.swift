import FleetCore

extension FleetOrchestrator {
    /// Adds an observer of device events. Call before `start()` so it hears every device join.
    public func addObserver(_ observer: any FleetObserver) {
        observers.append(observer)
    }

    /// Tells every observer, in registration order.
    func notifyObservers(_ body: (any FleetObserver) -> Void) {
        for observer in observers { body(observer) }
    }
}
