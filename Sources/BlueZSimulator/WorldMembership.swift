import Foundation
import Glibc

/// Which gateway of which shared world a `BlueZSimulator` plays.
public struct WorldGateway: Sendable, Hashable {
    public var id: String
    public var world: SharedWorld

    public init(id: String, world: SharedWorld) {
        self.id = id
        self.world = world
    }
}

/// One instance's place in its shared world, from `join` to `leave` (or its process's death):
/// it holds its gateway's lock, and claims and releases devices in the ledger.
///
/// Owned by the simulator's actor, which calls it from isolated code only; each call is one
/// locked read-modify-write of the ledger (`SharedWorld.withLedger`). A ledger that cannot be
/// read or written is reported on stderr and refuses claims: the world never risks a double link.
struct WorldMembership {
    let gateway: String
    let world: SharedWorld
    /// `gateways/<id>.lock`, open and `flock`ed: the kernel closes it with the process.
    private let lockDescriptor: Int32

    /// Takes the gateway's lock and records the instance; throws `gatewayRunning` when another
    /// instance holds it. Holds left in the ledger by this gateway's previous instance have ended
    /// by then (its lock was free: `SharedWorld.withLedger`). `devices` get a record each, so the
    /// ledger lists every device heard.
    static func join(_ place: WorldGateway, devices: [String]) throws -> WorldMembership {
        let gateway = place.id
        guard WorldSpec.isValidGatewayID(gateway) else { throw SharedWorldError.invalid("'\(gateway)' is not a gateway id") }
        var locked: Int32?
        do {
            return try place.world.withLedger { ledger in
                // Under the ledger lock: a reader probing this lock would otherwise make it look taken.
                let descriptor = try SharedWorld.open(place.world.gatewayLockPath(gateway), create: true)
                guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                    let code = errno
                    close(descriptor)
                    throw code == EWOULDBLOCK ? SharedWorldError.gatewayRunning(gateway) : SharedWorldError.system("flock", code)
                }
                locked = descriptor
                return record(gateway, joining: place.world, with: descriptor, devices: devices, in: &ledger)
            }
        } catch {
            // The ledger could not be written: the instance does not run, so neither does its lock.
            if let locked { close(locked) }
            throw error
        }
    }

    private static func record(
        _ gateway: String, joining world: SharedWorld, with descriptor: Int32, devices: [String], in ledger: inout WorldLedger
    ) -> WorldMembership {
        for address in devices where ledger.devices[address] == nil { ledger.devices[address] = WorldDeviceRecord() }
        let joins = (ledger.gateways[gateway]?.joins ?? 0) + 1
        ledger.gateways[gateway] = WorldGatewayRecord(pid: getpid(), joins: joins, running: true)
        return WorldMembership(gateway: gateway, world: world, lockDescriptor: descriptor)
    }

    /// Records the instance stopped, then drops the gateway's lock. Call once, after its links ended.
    func leave() {
        update("leave") { $0.gateways[gateway]?.running = false }
        close(lockDescriptor)
    }

    /// The device is this gateway's to link, unless another gateway holds it: then the attempt
    /// is counted as one that would have made a double link, and refused.
    func claim(_ address: String) -> Bool {
        update("claim \(address)", failure: false) { ledger in
            var record = ledger.device(address)
            if let holder = record.holder, holder != gateway {
                record.connectsWhileHeldElsewhere[gateway, default: 0] += 1
                ledger.devices[address] = record
                return false
            }
            record.holder = gateway
            ledger.devices[address] = record
            return true
        }
    }

    /// The link this gateway claimed came up.
    func linkUp(_ address: String) {
        update("link up \(address)") { ledger in
            var record = ledger.device(address)
            if record.linkedBy.contains(where: { $0 != gateway }) { record.doubleLinks += 1 }
            if !record.linkedBy.contains(gateway) { record.linkedBy.append(gateway) }
            record.linksMade[gateway, default: 0] += 1
            ledger.devices[address] = record
        }
    }

    /// This gateway's link to the device (or its attempt) ended: the device advertises again.
    func release(_ address: String) {
        update("release \(address)") { ledger in
            guard var record = ledger.devices[address] else { return }
            if record.holder == gateway { record.holder = nil }
            record.linkedBy.removeAll { $0 == gateway }
            ledger.devices[address] = record
        }
    }

    /// What this gateway's discovery needs to know of the world now: the devices other gateways
    /// hold, and the RSSI changes asked for this gateway.
    func view() -> (heldElsewhere: Set<String>, rssi: [String: Int]) {
        update("read", failure: ([], [:])) { ledger in
            var held = Set<String>()
            var rssi: [String: Int] = [:]
            for (address, record) in ledger.devices {
                if let holder = record.holder, holder != gateway { held.insert(address) }
                if let value = record.rssi[gateway] { rssi[address] = value }
            }
            return (held, rssi)
        }
    }

    private func update<T>(_ what: String, failure: T, _ change: (inout WorldLedger) throws -> T) -> T {
        do {
            return try world.withLedger(change)
        } catch {
            FileHandle.standardError.write(Data("bluez-sim: world ledger (\(what), gateway \(gateway)): \(error)\n".utf8))
            return failure
        }
    }

    private func update(_ what: String, _ change: (inout WorldLedger) throws -> Void) {
        update(what, failure: ()) { try change(&$0) }
    }
}
