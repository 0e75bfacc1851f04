import Foundation
import Glibc

/// A directory that several bluez-sim instances (gateways) share as one world of wearables: the
/// air that lets a peripheral hold one link, and the world's counters.
///
/// The directory holds:
/// - `ledger.json`: the `WorldLedger` (holders and counters), replaced by atomic rename;
/// - `ledger.lock`: `flock`ed around every read-modify-write of the ledger, by every instance
///   and by a test reading it;
/// - `gateways/<id>.lock`: `flock`ed by the instance running as that gateway for as long as it
///   runs. The kernel drops the lock when the instance's process dies, however it dies, as a
///   gateway's links drop when its controller dies: the next read of the ledger ends the holds
///   of every gateway whose lock is free (`heldAtDeath`).
///
/// Every call blocks its thread for the length of a small file's read and write (the ledger lock
/// is never held across anything else). Guarantees: the holder of a device is recorded only
/// under the ledger lock and only while no other running gateway holds it, so two instances
/// never hold one device; a hold outlives its instance only until the next read.
public struct SharedWorld: Sendable, Hashable {
    public let directory: URL

    /// The world in `directory`, created if missing (with `gateways/`).
    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: gatewaysDirectory, withIntermediateDirectories: true)
    }

    var ledgerURL: URL { directory.appendingPathComponent("ledger.json") }
    var ledgerLockPath: String { directory.appendingPathComponent("ledger.lock").path }
    var gatewaysDirectory: URL { directory.appendingPathComponent("gateways") }
    func gatewayLockPath(_ gateway: String) -> String { gatewaysDirectory.appendingPathComponent("\(gateway).lock").path }

    // MARK: - For tests and people

    /// The ledger now, the holds of instances that died ended first.
    public func snapshot() throws -> WorldLedger {
        try withLedger { $0 }
    }

    /// Gateway `gateway` hears the device at `rssi` dBm from now on (its instance applies it at
    /// its next discovery pass). A gateway that does not hear the device (scenario) ignores it.
    public func setRSSI(_ rssi: Int, of address: String, heardBy gateway: String) throws {
        let normalized = try DeviceAddress.normalized(address)
        guard WorldSpec.isValidGatewayID(gateway) else { throw SharedWorldError.invalid("'\(gateway)' is not a gateway id") }
        guard (-127...20).contains(rssi) else { throw SharedWorldError.invalid("RSSI \(rssi) is not -127 to 20 dBm") }
        try withLedger { $0.devices[normalized, default: WorldDeviceRecord()].rssi[gateway] = rssi }
    }

    // MARK: - The locked ledger

    /// Runs `change` on the ledger under the ledger lock, after ending the holds of gateways
    /// that no longer run; writes the ledger back when it changed.
    func withLedger<T>(_ change: (inout WorldLedger) throws -> T) throws -> T {
        let lock = try Self.open(ledgerLockPath, create: true)
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SharedWorldError.system("flock \(ledgerLockPath)", errno) }
        }
        let stored = try readLedger()
        var ledger = stored
        endHoldsOfStoppedGateways(&ledger)
        let result = try change(&ledger)
        if ledger != stored { try write(ledger) }
        return result
    }

    private func readLedger() throws -> WorldLedger {
        guard let data = try? Data(contentsOf: ledgerURL) else { return WorldLedger() }
        do {
            return try JSONDecoder().decode(WorldLedger.self, from: data)
        } catch {
            throw SharedWorldError.invalid("\(ledgerURL.lastPathComponent) is not a world ledger: \(error)")
        }
    }

    private func write(_ ledger: WorldLedger) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // `.atomic` writes a temporary file and renames it over the ledger: a reader, or an
        // instance killed mid-write, never leaves or sees half a ledger.
        try encoder.encode(ledger).write(to: ledgerURL, options: .atomic)
    }

    /// A gateway whose lock is free has no instance: its holds end, as its links did when it died.
    private func endHoldsOfStoppedGateways(_ ledger: inout WorldLedger) {
        var named = Set(ledger.gateways.keys)
        for record in ledger.devices.values {
            if let holder = record.holder { named.insert(holder) }
            named.formUnion(record.linkedBy)
        }
        let running = Set(named.filter { isRunning($0) })
        for gateway in named where ledger.gateways[gateway]?.running != running.contains(gateway) {
            ledger.gateways[gateway]?.running = running.contains(gateway)
        }
        for (address, record) in ledger.devices {
            var updated = record
            if let holder = record.holder, !running.contains(holder) {
                updated.holder = nil
                updated.heldAtDeath[holder, default: 0] += 1
            }
            updated.linkedBy.removeAll { !running.contains($0) }
            if updated != record { ledger.devices[address] = updated }
        }
    }

    /// Whether an instance holds `gateway`'s lock. Only under the ledger lock: the probe takes the
    /// lock for an instant when it is free, and a gateway joining meanwhile would find it taken.
    private func isRunning(_ gateway: String) -> Bool {
        guard WorldSpec.isValidGatewayID(gateway), let probe = try? Self.open(gatewayLockPath(gateway), create: false) else {
            return false
        }
        // Closing this descriptor releases only its own lock: flock locks belong to the open file
        // description, so a lock this process holds through another descriptor stays.
        defer { close(probe) }
        if flock(probe, LOCK_EX | LOCK_NB) == 0 { return false }
        // Anything but "held by someone" (EWOULDBLOCK) is taken for running: a hold is never
        // ended on a doubt.
        return true
    }

    static func open(_ path: String, create: Bool) throws -> Int32 {
        let descriptor = create ? Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) : Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw SharedWorldError.system("open \(path)", errno) }
        return descriptor
    }
}

/// A shared world that cannot be used.
public enum SharedWorldError: Error, CustomStringConvertible {
    case invalid(String)
    case system(String, Int32)
    /// Another instance runs as this gateway.
    case gatewayRunning(String)

    public var description: String {
        switch self {
        case .invalid(let reason): return reason
        case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
        case .gatewayRunning(let gateway): return "gateway \(gateway) already runs in this world"
        }
    }
}
