import BlueZ
import FleetCore
import FleetState
import FoundationEssentials
import Logging

extension FleetOrchestrator {
    /// Saves what the fleet learns in `store`: every `persist` effect becomes a change to the
    /// device's record (services seen, last connected and its adapter, name, pinned or pool).
    /// Changes are applied one after another in the order the devices reported them, so a later
    /// fact never lands before an earlier one; `stop()` waits until the last one is applied.
    /// Call before `start()`.
    public func saveKnowledge(in store: StateStore) {
        let (updates, sink) = AsyncStream<StoreFeeder.Change>.makeStream()
        addObserver(StoreFeeder(sink: sink))
        storeWriter = Task {
            for await change in updates {
                switch change {
                case .learned(let id, let update, let context, let now):
                    let membership: KnownDevice.Membership = context.pinned ? .pinned : .pool
                    await store.modify(id, creating: KnownDevice(id: id, membership: membership)) { device in
                        device.apply(update, adapter: context.adapter, now: now)
                        device.membership = membership
                        if let name = context.name { device.name = name }
                    }
                case .linkEnded(let id, let now):
                    await store.markSeen(id, at: now)
                }
            }
        }
        finishStoreUpdates = { sink.finish() }
    }

    /// The daemon's fleet as wearfleetd starts it, before `start()`: an orchestrator that knows
    /// `known` (the state file's devices), saves what it learns in `store`, and keeps its
    /// run-time pins in the same state directory (`RuntimePinsFile`). The benchmark
    /// that measures the daemon starts its fleet through here too.
    /// `run` numbers the journal's sessions (`numberSessions(run:)`).
    public static func restoring(
        _ known: [KnownDevice], savingIn store: StateStore, configuration: FleetRuntimeConfiguration, client: BlueZClient,
        run: UInt64? = nil, logger: Logger
    ) async throws -> FleetOrchestrator {
        let orchestrator = try FleetOrchestrator(
            configuration: configuration, client: client, logger: logger, seed: UInt64.random(in: .min ... .max))
        if let run { await orchestrator.numberSessions(run: run) }
        await orchestrator.restore(known)
        await orchestrator.saveKnowledge(in: store)
        await orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: store.directory, logger: logger))
        return orchestrator
    }
}

/// The state store's consumer of fleet events: what the fleet learned, and when a device's link
/// ended (it was seen until then: `forget_after` counts from there), stamped with the wall clock,
/// in the order it happened.
struct StoreFeeder: FleetObserver {
    enum Change: Sendable {
        case learned(DeviceID, DeviceEffect.StoreUpdate, FleetOrchestrator.PersistContext, Date)
        case linkEnded(DeviceID, Date)
    }

    let sink: AsyncStream<Change>.Continuation

    func observe(_ event: FleetEvent) {
        switch event {
        case .learned(let id, let update, let context):
            sink.yield(.learned(id, update, context, Date()))
        case .lifecycle(let id, .stateChanged(let from, let to, _, _), _, _) where from.acceptsWrites && !to.acceptsWrites:
            sink.yield(.linkEnded(id, Date()))
        default:
            break
        }
    }
}
