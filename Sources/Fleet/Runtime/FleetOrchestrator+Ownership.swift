import FleetCore

// The fleet's side of several gateways sharing one fleet (ARCHITECTURE.md, "Several gateways"):
// the MQTT service's ownership link turns the gate on, reads what this gateway hears and holds,
// hands down what the ownership machine decided, and tells the fleet who owns what, for status.

extension FleetOrchestrator {
    /// On: every device waits to be given by the ownership machine before the fleet connects it
    /// (links already up stay until released). Off: the fleet connects on its own again.
    public func setOwnershipGate(enabled: Bool) async {
        await submit(.ownershipGate(enabled: enabled))
        if !enabled { owners = [:] }
    }

    /// The ownership machine gave the device to this gateway (`linkAllowed`) or took it away.
    public func ownershipDecided(_ device: DeviceID, linkAllowed: Bool) {
        enqueue(.ownershipDecided(device, linkAllowed: linkAllowed))
    }

    /// Who owns each device, as the ownership machine last knew it (`status()` shows it).
    public func noteOwners(_ owners: [DeviceID: String]) {
        self.owners = owners
    }
}
