import FleetCore
import FoundationEssentials

extension KnownDevice {
    /// Folds what the state machine reported (`DeviceEffect.storeUpdate`) into the record.
    /// Services only accumulate: a reconnect that resolves fewer services forgets none.
    public mutating func apply(_ update: DeviceEffect.StoreUpdate, adapter: AdapterID?, now: Date) {
        servicesSeen = servicesSeen + update.servicesSeen
        lastSeen = now
        if update.connectedNow {
            lastConnected = now
            if let adapter { self.adapter = adapter }
        }
    }
}
