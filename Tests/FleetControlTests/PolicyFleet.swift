import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// What every test of the installed bus policy starts from: a `PolicyBus`, bluez-sim on it
/// serving bonded heart-rate straps, and `wearfleetd` running as user `wearfleet` with some of
/// them pinned, its control interface up and a pinned strap ready.
///
/// The caller stops the daemon and the simulator (the order is part of some tests) and removes
/// `files`.
struct PolicyFleet {
    let bus: PolicyBus
    let simulator: BlueZSimulator
    let files: DaemonFiles
    let daemon: DaemonProcess

    /// `daemonSeesBusUsers`: the daemon runs in the bus's mount namespace, seeing the same user
    /// and group databases as dbus-daemon (for its own check of a caller's groups).
    static func start(straps: [String], pinned: [String], seed: UInt64, daemonSeesBusUsers: Bool = false) async throws -> PolicyFleet {
        let bus = try PolicyBus()
        let simulator = try BlueZSimulator(
            scenario: Scenario(
                seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)],
                devices: straps.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) }),
            bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        let files = try DaemonFiles(pinned: pinned)
        do {
            #expect(chown(files.state, uid_t(PolicyBus.wearfleetUID), gid_t(PolicyBus.wearfleetUID)) == 0)
            let asWearfleet = PolicyBus.asUser(PolicyBus.wearfleetUID, group: PolicyBus.wearfleetUID)
            let daemon = try DaemonProcess(
                bus: bus.address, files: files, launcher: daemonSeesBusUsers ? bus.inNamespace + asWearfleet : asWearfleet)
            try await daemon.lines(containing: "control interface ready")
            try await daemon.lines(containing: "→ ready", within: .seconds(30))
            return PolicyFleet(bus: bus, simulator: simulator, files: files, daemon: daemon)
        } catch {
            files.remove()
            throw error
        }
    }
}
