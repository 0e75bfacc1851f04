import FleetCore
import Logging

/// The journal's consumer of fleet events: one structured line per state change, failure,
/// setup problem, eviction, and bluetoothd or adapter change, with the fields `journalctl`
/// users filter on (`DEVICE_ADDRESS`, `DEVICE_NAME`, `ADAPTER`, `SESSION_ID`, `EVENT`, …).
struct FleetEventLog: Sendable {
    let logger: Logger

    func record(_ event: FleetEvent) {
        switch event {
        case .bluetoothdAppeared:
            logger.notice("bluetoothd appeared", metadata: ["event": "bluetoothd_appeared"])
        case .bluetoothdVanished:
            logger.warning("bluetoothd vanished; every device is suspended until it returns", metadata: ["event": "bluetoothd_vanished"])
        case .adapterPowerChanged(let adapter, let powered):
            logger.log(
                level: powered ? .info : .warning, powered ? "adapter powered" : "adapter powered off",
                metadata: ["adapter": "\(adapter)", "event": powered ? "adapter_powered" : "adapter_unpowered"])
        case .evicted(let device, let adapter, let reason):
            logger.info("evicting pool device", metadata: [
                "device_address": "\(device.address)", "adapter": "\(adapter)", "event": "evicted", "reason": "\(reason)",
            ])
        case .lifecycle(let id, let lifecycle, let context, _):
            log(id, lifecycle, context: context)
        case .runtimePinsChanged(let pins):
            logger.notice("run-time pins changed", metadata: [
                "event": "runtime_pins_changed", "pinned": "\(pins.map(\.id.address.description).joined(separator: " "))",
            ])
        case .writeFinished(let id, let failure?):
            logger.warning("write failed", metadata: [
                "device_address": "\(id.address)", "event": "write_failed", "bluez_error": "\(failure.name): \(failure.message)",
            ])
        case .readFinished(let id, let characteristic, let failure?):
            logger.warning("read failed", metadata: [
                "device_address": "\(id.address)", "event": "read_failed", "characteristic": "\(characteristic)",
                "bluez_error": "\(failure.name): \(failure.message)",
            ])
        case .deviceAdded, .deviceRemoved, .attemptGranted, .reloaded, .learned, .writeFinished, .readFinished:
            break
        }
    }

    private func log(_ id: DeviceID, _ event: DeviceEffect.LifecycleEvent, context: FleetEvent.DeviceContext) {
        var metadata: Logger.Metadata = ["device_address": "\(id.address)", "event": "state_changed"]
        if let name = context.name { metadata["device_name"] = "\(name)" }
        switch event {
        case .stateChanged(let from, let to, let session, let cause):
            metadata["device_state"] = "\(to.name)"
            metadata["previous_state"] = "\(from.name)"
            metadata["session_id"] = "\(session)"
            if let adapter = context.adapter { metadata["adapter"] = "\(adapter)" }
            if let cause { metadata["error_class"] = "\(cause.rawValue)" }
            // Suspended and degraded say why (`suspended(noPoweredAdapter)`), so a change of reason
            // alone is not logged as a puzzling "suspended → suspended".
            let detail: (DeviceState) -> String = { state in
                switch state {
                case .suspended, .degraded: state.description
                default: state.name
                }
            }
            if case .suspended = to { metadata["state_reason"] = "\(to.description)" }
            if case .degraded = to { metadata["state_reason"] = "\(to.description)" }
            let level: Logger.Level = to == .ready ? .notice : (cause == nil ? .info : .warning)
            logger.log(level: level, "device \(detail(from)) → \(detail(to))", metadata: metadata)
        case .failed(let failureClass, let error, let session):
            metadata["event"] = "failed"
            metadata["session_id"] = "\(session)"
            metadata["error_class"] = "\(failureClass.rawValue)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            logger.warning("device failure: \(failureClass.rawValue)", metadata: metadata)
        case .setupProblem(let characteristic, let error, let session):
            metadata["event"] = "setup_problem"
            metadata["session_id"] = "\(session)"
            metadata["characteristic"] = "\(characteristic)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            logger.warning("characteristic setup failed", metadata: metadata)
        }
    }
}
