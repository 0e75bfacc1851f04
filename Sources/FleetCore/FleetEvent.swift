/// Everything the fleet does that others may want to hear, as data: the one way out of the fleet
/// machine. The runtime hands each event to its consumers (journald logging, metrics, the state
/// stream), in the order the fleet machine produced them.
public enum FleetEvent: Sendable, Hashable {
    /// A device joined the fleet: pinned at start or by a reload, or a pool candidate when first
    /// seen.
    case deviceAdded(FleetObservedDevice)
    /// A device left the fleet: forget what was kept about it. `reason` says whose doing it was:
    /// the device's or the pool's (`left`, `notAdmitted`), or an operator's that made the fleet
    /// forget it (`unpinned`, `unpinnedByConfiguration`).
    case deviceRemoved(DeviceID, reason: RemovalReason)
    /// What the fleet holds of a device that stays in it changed — pinned or not, its class, its
    /// name, held by `disconnect` or not — by a command, a reload or restored run-time pins; the
    /// device as it is now. (Its link and state come as lifecycle events, a name learnt from its
    /// advertising with its next lifecycle event's context.)
    case deviceUpdated(FleetObservedDevice)
    /// A lifecycle event from the device's state machine (state change, failure, setup problem),
    /// with what the fleet knows of the device at that moment.
    // The large cases are boxed (`indirect`), so the actions that carry events stay small.
    indirect case lifecycle(DeviceID, DeviceEffect.LifecycleEvent, context: DeviceContext, at: MonotonicInstant)
    /// The pool policy granted the device a connection attempt on `adapter`.
    case attemptGranted(DeviceID, adapter: AdapterID, at: MonotonicInstant)
    /// The pool policy took a pool device's slot away (for a pinned device, or a better candidate).
    case evicted(DeviceID, adapter: AdapterID, reason: PoolEviction.Reason)
    case bluetoothdAppeared
    /// Every device is suspended until bluetoothd returns.
    case bluetoothdVanished
    case adapterPowerChanged(AdapterID, powered: Bool)
    /// bluetoothd refused or did not answer a discovery call; it is made again after `retryIn`.
    /// `inARow` counts how many times in a row the adapter's calls failed with this same error (a
    /// new error starts again at 1).
    indirect case discoveryFailed(AdapterID, call: DiscoveryCall, DeviceEvent.Failure, inARow: Int, retryIn: Duration)
    /// bluetoothd reports a device with a pinned device's address but the other address type
    /// (`heard`): the pin will never match it (a random-address cuff pinned without
    /// `address_type = "random"` waits `asleep` for ever). Once per pin and run; `definedAt` is
    /// the pin's `file:line` when it comes from the configuration file.
    case addressTypeMismatch(pinned: DeviceID, heard: DeviceID, definedAt: String?)
    /// The device's machine learned something the state file keeps (services seen, a link made,
    /// its name and membership): the state store's input.
    indirect case learned(DeviceID, DeviceEffect.StoreUpdate, FleetStateMachine.PersistContext)
    /// A write to the device finished: nil failure means BlueZ took it.
    indirect case writeFinished(DeviceID, failure: DeviceEvent.Failure?)
    /// A read command finished (the value itself is published as a value).
    indirect case readFinished(DeviceID, characteristic: String, failure: DeviceEvent.Failure?)
    /// The pins made at run time changed (the state store keeps them across restarts).
    case runtimePinsChanged([FleetRuntimeConfiguration.PinnedDevice])
    /// A reload was applied, all at once.
    case reloaded(FleetStateMachine.ReloadSummary)
    /// What ended the device's link `ago`, learned after BlueZ reported the loss without a
    /// reason (its adapter powered off, or bluetoothd left).
    case linkLossExplained(DeviceID, adapter: AdapterID, cause: LinkLossCause, ago: Duration)

    public enum LinkLossCause: String, Sendable, Hashable, Codable {
        case adapterPoweredOff = "adapter_powered_off"
        case bluetoothdGone = "bluetoothd_gone"
        /// The kernel ended a link that a bluetoothd which left without closing its links (killed,
        /// crashed) had left behind: Linux closes such links ~2 s after their last user went, and
        /// a bluetoothd started meanwhile first reports them connected, then lost.
        case bluetoothdLeftLinksBehind = "bluetoothd_left_links_behind"
    }

    /// What the fleet knows of a device when one of its lifecycle events is published.
    public struct DeviceContext: Sendable, Hashable {
        public var name: String?
        /// The adapter of its link or attempt, if any.
        public var adapter: AdapterID?
        public var pinned: Bool

        public init(name: String?, adapter: AdapterID?, pinned: Bool) {
            self.name = name
            self.adapter = adapter
            self.pinned = pinned
        }
    }
}

/// Who a device is, as a consumer sees it when the device joins the fleet.
public struct FleetObservedDevice: Sendable, Hashable {
    public var id: DeviceID
    /// The configured name (pinned) or BlueZ's alias (pool), if any.
    public var name: String?
    /// The device class whose settings the device uses; nil means the defaults.
    public var className: String?
    public var pinned: Bool
    /// Held disconnected by a `disconnect` command until `reconnect` (or `pin`).
    public var held: Bool

    public init(id: DeviceID, name: String?, className: String?, pinned: Bool, held: Bool = false) {
        self.id = id
        self.name = name
        self.className = className
        self.pinned = pinned
        self.held = held
    }
}

extension FleetEvent {
    /// Why a device left the fleet (`deviceRemoved`). The state file keeps what was learnt of it
    /// in every case.
    public enum RemovalReason: String, Sendable, Hashable, CaseIterable {
        /// A pool device bluetoothd no longer reports (it left, or its object expired).
        case left
        /// The pool no longer admits it: turned off, or its rules changed by a reload.
        case notAdmitted = "not_admitted"
        /// `unpin` (a command) with the pool off: the fleet forgets it.
        case unpinned
        /// A reload took its pin out of the configuration file, with the pool off.
        case unpinnedByConfiguration = "unpinned_by_configuration"

        /// An operator told the fleet to let go of it (rather than the device or the pool's rules).
        public var isForgotten: Bool { self == .unpinned || self == .unpinnedByConfiguration }
    }
}
