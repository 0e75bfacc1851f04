import FleetCore

/// Someone who wants to know what the fleet does as it happens (metrics, a live view) without
/// being able to change it. Register with `FleetOrchestrator.addObserver(_:)` before `start()`,
/// so that every device is announced with `deviceAdded` before its first event. Figures the
/// fleet already keeps (value and write counts, queue depths) are read from `status()` and
/// `writeStatus(_:)` instead.
///
/// Every method is called synchronously on the orchestrator's actor, in the order things
/// happened: implementations must be quick and never block (take a lock, update a number,
/// return). Every method has an empty default, so an observer implements only what it uses.
public protocol FleetObserver: Sendable {
    /// A device joined the fleet: pinned at start, or a pool candidate when first seen.
    func deviceAdded(_ device: FleetObservedDevice)
    /// A device left the fleet (a reload unpinned it): forget what was kept about it.
    func deviceRemoved(_ device: DeviceID)
    /// A lifecycle event from the device's state machine (state changes, failures, setup
    /// problems), at `instant` on the orchestrator's clock.
    func lifecycle(_ device: DeviceID, _ event: DeviceEffect.LifecycleEvent, at instant: MonotonicInstant)
    /// The pool policy granted the device a connection attempt on `adapter`.
    func attemptGranted(_ device: DeviceID, adapter: AdapterID, at instant: MonotonicInstant)
}

extension FleetObserver {
    public func deviceAdded(_ device: FleetObservedDevice) {}
    public func deviceRemoved(_ device: DeviceID) {}
    public func lifecycle(_ device: DeviceID, _ event: DeviceEffect.LifecycleEvent, at instant: MonotonicInstant) {}
    public func attemptGranted(_ device: DeviceID, adapter: AdapterID, at instant: MonotonicInstant) {}
}

/// Who a device is, as an observer sees it when the device joins the fleet.
public struct FleetObservedDevice: Sendable, Hashable {
    public var id: DeviceID
    /// The configured name (pinned) or BlueZ's alias (pool), if any.
    public var name: String?
    /// The device class whose settings the device uses; nil means the defaults.
    public var className: String?
    public var pinned: Bool

    public init(id: DeviceID, name: String?, className: String?, pinned: Bool) {
        self.id = id
        self.name = name
        self.className = className
        self.pinned = pinned
    }
}
