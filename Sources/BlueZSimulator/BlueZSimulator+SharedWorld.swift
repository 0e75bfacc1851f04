import DBus
import Foundation

// One gateway of a shared world (`SharedWorld`): the device's one link is the world's, other
// gateways' links keep it from advertising here, and the world's RSSI changes apply here. Without
// a world every call below is free and changes nothing.

extension BlueZSimulator {
    /// Takes the device's link for this gateway before an attempt starts; false when another
    /// gateway holds it (counted in the world as an attempt that would have made a double link).
    func claimInWorld(_ address: String) -> Bool {
        worldMembership?.claim(address) ?? true
    }

    /// The link this gateway claimed came up (`linksMade`, and the double-link check).
    func linkUpInWorld(_ address: String) {
        worldMembership?.linkUp(address)
    }

    /// This gateway's link (or attempt) ended: the device advertises to the world again.
    func releaseInWorld(_ address: String) {
        worldMembership?.release(address)
    }

    /// The devices other gateways hold now, which advertise to nobody; applies the RSSI changes
    /// asked for this gateway on the way. Read once per discovery pass.
    func devicesHeldElsewhereInWorld() -> Set<String> {
        guard let worldMembership else { return [] }
        let view = worldMembership.view()
        for (address, rssi) in view.rssi where devices[address]?.configuration.rssi != rssi {
            setMeanRSSI(rssi, of: address)
        }
        return view.heldElsewhere
    }

    /// The device's best adapter reads `rssi` from now on, each further one 6 dB less (as the
    /// scenario's RSSI is spread over `heardBy`).
    private func setMeanRSSI(_ rssi: Int, of address: String) {
        guard let device = devices[address] else { return }
        devices[address]?.configuration.rssi = rssi
        for (rank, adapter) in device.configuration.heardBy.enumerated() {
            devices[address]?.objects[adapter]?.meanRSSI = rssi - 6 * rank
        }
    }

    // MARK: - Control

    /// The world's ledger now (holds of instances that died ended first); nil outside a world.
    public func worldSnapshot() throws -> WorldLedger? {
        try worldGateway?.world.snapshot()
    }

    /// `SetWorldRSSI`: gateway `gateway` (empty: this one) hears the device at `rssi` from its
    /// next discovery pass. Throws `InvalidArgs` for a device or gateway not in the world, or a
    /// gateway that does not hear the device.
    func setWorldRSSI(device: String, gateway: String, rssi: Int) throws {
        guard let worldGateway else { throw DBusError(name: DBusError.invalidArgs, message: "bluez-sim runs no shared world") }
        let gateway = gateway.isEmpty ? worldGateway.id : gateway
        guard let address = try? DeviceAddress.normalized(device), let hearing = worldHearing[address] else {
            throw DBusError(name: DBusError.invalidArgs, message: "no device \(device) in the world")
        }
        guard hearing[gateway] != nil else {
            throw DBusError(name: DBusError.invalidArgs, message: "gateway \(gateway) does not hear \(address)")
        }
        guard (-127...20).contains(rssi) else { throw DBusError(name: DBusError.invalidArgs, message: "RSSI must be -127 to 20 dBm") }
        do {
            try worldGateway.world.setRSSI(rssi, of: address, heardBy: gateway)
        } catch {
            throw DBusError(name: DBusError.failed, message: "world ledger: \(error)")
        }
    }

    /// `GetWorld`: each device of the world's ledger as `a{sv}`.
    func worldSummaries() throws -> [(address: String, values: [String: DBusValue])] {
        let ledger: WorldLedger?
        do {
            ledger = try worldSnapshot()
        } catch {
            throw DBusError(name: DBusError.failed, message: "world ledger: \(error)")
        }
        guard let ledger else { return [] }
        func counts(_ values: [String: Int]) -> DBusValue {
            .dictionary(
                key: .string, value: .uint32,
                values.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .uint32(UInt32(clamping: $0.value))) })
        }
        return ledger.devices.keys.sorted().map { address in
            let record = ledger.device(address)
            return (
                address,
                [
                    "Holder": .string(record.holder ?? ""), "LinkedBy": .stringArray(record.linkedBy),
                    "LinksMade": counts(record.linksMade), "ConnectsWhileHeldElsewhere": counts(record.connectsWhileHeldElsewhere),
                    "DoubleLinks": .uint32(UInt32(clamping: record.doubleLinks)), "HeldAtDeath": counts(record.heldAtDeath),
                    "RSSI": .dictionary(
                        key: .string, value: .int16,
                        record.rssi.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .int16(Int16(clamping: $0.value))) }),
                ]
            )
        }
    }
}
