import Fleet
import FleetCore
import Logging
import Synchronization

/// Joins the fleet and the ownership coordinator while several gateways share the fleet
/// (`[cluster] enabled`): the gate goes on (nothing connects until given), what the fleet hears
/// and holds goes to the coordinator once a second, its decisions come back to the fleet as they
/// are made, and who owns what goes to the fleet (for `status`) and to `ownersChanged` (the
/// bridge publishes the state of the devices this gateway owns, and only those), with whether
/// the coordinator is past its resync grace (what the broker kept has been heard).
///
/// Observations are polled once a second — the coordinator needs every heard device's RSSI again
/// and again (its smoothing and its bids follow them), which no fleet event carries, and a
/// second is well inside the lease and the dwell the agreement counts in — and taken again at
/// once when a device's state changes, so a link's coming and going is told without delay.
public struct OwnershipFleetLink: Sendable {
    public static let observationInterval: Duration = .seconds(1)
    private let coordinator: OwnershipCoordinator
    private let fleet: FleetOrchestrator
    private let logger: Logger
    private let ownersChanged: @Sendable (_ owners: [DeviceID: String], _ settled: Bool) async -> Void

    public init(
        coordinator: OwnershipCoordinator, fleet: FleetOrchestrator, logger: Logger,
        ownersChanged: @escaping @Sendable (_ owners: [DeviceID: String], _ settled: Bool) async -> Void = { _, _ in }
    ) {
        self.coordinator = coordinator
        self.fleet = fleet
        self.logger = logger
        self.ownersChanged = ownersChanged
    }

    /// Runs until cancelled (the gate stays on after: a stopping daemon gives nothing back to
    /// the fleet; a reload that turns the cluster off turns the gate off itself).
    public func run() async {
        await fleet.setOwnershipGate(enabled: true)
        logger.info("cluster: the fleet connects only the devices given to this gateway", metadata: ["event": "ownership_gate_on"])
        let grants = Grants()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.carryOutDecisions(grants) }
            group.addTask { await self.observeFleet(grants) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The devices given to this gateway (acquired, not released): one the fleet removes and
    /// takes back (a reload, `unpin` then `pin`) comes back waiting and is given again.
    final class Grants: Sendable {
        let devices = Mutex<Set<DeviceID>>([])
    }

    private func carryOutDecisions(_ grants: Grants) async {
        for await decision in coordinator.decisions {
            switch decision {
            case .acquire(let device):
                grants.devices.withLock { _ = $0.insert(device) }
                await fleet.ownershipDecided(device, linkAllowed: true)
            case .release(let device):
                grants.devices.withLock { _ = $0.remove(device) }
                await fleet.ownershipDecided(device, linkAllowed: false)
            }
        }
    }

    private func observeFleet(_ grants: Grants) async {
        // A pass once a second (RSSI moves without events) and at once after each state change
        // of a device (a link that comes up or goes is told without waiting: a broker lost just
        // after a link came up must find the machine knowing of it, fail-static keeps it).
        let (passes, pass) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let events = fleet.fleetEvents(bufferingNewest: 64)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while (try? await Task.sleep(for: Self.observationInterval)) != nil { pass.yield() }
            }
            group.addTask {
                for await activity in events {
                    if case .fleet(.lifecycle(_, .stateChanged, _, _)) = activity { pass.yield() }
                }
            }
            group.addTask {
                var feed = OwnershipFeed()
                let clock = SystemMonotonicClock()
                // nil: the first pass always tells the fleet, replacing what an earlier
                // coordinator showed.
                var shownOwners: [DeviceID: String]?
                var shownSettled = false
                pass.yield()
                for await _ in passes {
                    let inputs = feed.inputs(from: await fleet.ownershipObservations(), now: clock.now())
                    if !inputs.isEmpty { await coordinator.observe(inputs) }
                    let given = grants.devices.withLock { $0 }
                    for device in feed.appeared.intersection(given).sorted() { await fleet.ownershipDecided(device, linkAllowed: true) }
                    let owners = await coordinator.owners().mapValues(\.name)
                    let settled = await coordinator.isPastResyncGrace()
                    if owners != shownOwners || settled != shownSettled {
                        if owners != shownOwners { await fleet.noteOwners(owners) }
                        shownOwners = owners
                        shownSettled = settled
                        await ownersChanged(owners, settled)
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
