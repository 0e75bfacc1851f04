import FleetCore
import FoundationEssentials

/// The fleet's live outlet for the control interface: the watch clients' hub, kept informed of
/// every device's session, name and adapter, and the state changes that become watch records and
/// `DeviceStateChanged` signals.
///
/// It follows the fleet through `fleetEvents` (fleet events only: the value path pays nothing
/// for it) from `start` to `stop`; values reach the hub directly from the pipeline, and only
/// while a client watches.
public final class LiveOutlet: Sendable {
    /// A state change, as the `DeviceStateChanged` signal carries it.
    public typealias StateChangeHandler = @Sendable (LiveStateRecord) async -> Void

    public let hub: WatchHub
    private let follower: Task<Void, Never>

    /// Starts following `fleet`; `stateChanged` is called for every state change, in order.
    public init(fleet: FleetOrchestrator, stateChanged: StateChangeHandler? = nil) async throws {
        let hub = try WatchHub(pipeline: fleet.pipeline)
        self.hub = hub
        // Subscribe before reading the status, so no change falls between the two.
        let events = fleet.fleetEvents(bufferingNewest: 4096)
        let run = await fleet.sessionRun
        for device in await fleet.status().devices {
            hub.update(device.id) { info in
                info = WatchHub.DeviceInfo(
                    session: device.sessions == 0 ? nil : FleetOrchestrator.sessionID(run: run, session: device.sessions),
                    name: device.name, adapter: device.adapter)
            }
        }
        follower = Task {
            var lost = 0
            for await activity in events {
                // State changes the feed dropped (this loop fell behind): the clients hear of them.
                if events.dropped > lost {
                    hub.reportLost(events.dropped - lost)
                    lost = events.dropped
                }
                guard case .fleet(let event) = activity else { continue }
                switch event {
                case .deviceAdded(let device):
                    hub.update(device.id) { $0.name = device.name ?? $0.name }
                case .deviceRemoved(let id, _):
                    hub.forget(id)
                case .lifecycle(let id, .stateChanged(let from, let to, let number, let cause), let context, _):
                    let session = FleetOrchestrator.sessionID(run: run, session: number)
                    hub.update(id) { info in
                        info.session = session
                        info.name = context.name ?? info.name
                        info.adapter = context.adapter
                    }
                    let record = LiveStateRecord(
                        device: id, state: to, previous: from, session: session, cause: cause, name: context.name,
                        adapter: context.adapter)
                    hub.publish(record)
                    await stateChanged?(record)
                default:
                    break
                }
            }
        }
    }

    /// Stops following the fleet and closes every watch client's socket.
    public func stop() {
        follower.cancel()
        hub.stop()
    }
}
