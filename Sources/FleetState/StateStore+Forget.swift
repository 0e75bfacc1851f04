import FleetCore
import FoundationEssentials

// `[daemon] forget_after`: a gateway meets many devices once (a visitor's watch, a strap that was
// replaced); the state file, and the pool candidates restored from it, must not keep them forever.

extension StateStore {
    /// Forgets the devices last seen before `cutoff` (`lastSeen`, else `lastConnected`), except
    /// those in `keeping` (the configuration's pins) and those recorded as pinned (run-time pins
    /// included); returns what was forgotten, saved after the
    /// debounce. A record with neither date (written before either was kept) is stamped `now`
    /// instead: it is forgotten only once it has gone unseen for the whole period.
    public func forget(seenBefore cutoff: Date, keeping: Set<DeviceID>) -> [KnownDevice] {
        var forgotten: [KnownDevice] = []
        let stamp = now()
        for device in knownDevices where !keeping.contains(device.id) && device.membership != .pinned {
            guard let seen = device.lastSeen ?? device.lastConnected else {
                modifyIfKnown(device.id) { $0.lastSeen = stamp }
                continue
            }
            if seen < cutoff {
                forgotten.append(device)
                remove(device.id)
            }
        }
        return forgotten
    }

    /// Stamps a device the daemon just had (its link ended) as seen `at`.
    public func markSeen(_ id: DeviceID, at now: Date) {
        modifyIfKnown(id) { $0.lastSeen = now }
    }
}
