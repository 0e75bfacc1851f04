import FleetCore
import Logging

/// The journal's consumer of fleet events: one structured line per state change, failure,
/// setup problem, eviction, and bluetoothd or adapter change, with the fields `journalctl`
/// users filter on (`DEVICE_ADDRESS`, `DEVICE_NAME`, `ADAPTER`, `SESSION_ID`, `EVENT`, …).
///
/// Every device line carries the device's address, and its name, adapter and session as soon
/// as they are known: the log remembers what the device's events said last, and tells the value
/// pipeline, whose value lines carry the same fields. A `SESSION_ID` is `<run>-<session>`, the
/// daemon's run number (`StateStore.beginRun`) and the device's connection session, so one id
/// never names sessions of two runs.
struct FleetEventLog: Sendable {
    let logger: Logger
    /// Where value lines learn the same device fields.
    let pipeline: ValuePipeline?
    /// This run's number; nil (tests, benchmarks): sessions are the device's numbers alone.
    var run: UInt64?
    /// What the journal names each device with, from its latest events.
    private var devices: [DeviceID: ValuePipeline.JournalContext] = [:]

    init(logger: Logger, pipeline: ValuePipeline? = nil, run: UInt64? = nil) {
        self.logger = logger
        self.pipeline = pipeline
        self.run = run
    }

    mutating func record(_ event: FleetEvent) {
        switch event {
        case .deviceAdded(let device):
            remember(device.id, name: device.name, adapter: nil, session: nil)
        case .deviceRemoved(let id, _):
            devices[id] = nil
        case .lifecycle(let id, let lifecycle, let context, _):
            let session: UInt64 =
                switch lifecycle {
                case .stateChanged(_, _, let session, _), .failed(_, _, let session), .setupProblem(_, _, let session),
                    .failureWithdrawn(_, _, let session):
                    session
                }
            remember(id, name: context.name, adapter: context.adapter, session: session)
        default:
            break
        }
        log(event)
    }

    /// Keeps what is new about a device and hands it to the value pipeline when it changed.
    private mutating func remember(_ id: DeviceID, name: String?, adapter: AdapterID?, session: UInt64?) {
        var context = devices[id] ?? ValuePipeline.JournalContext()
        let before = context
        if let name { context.name = name }
        if let adapter { context.adapter = adapter }
        if let session, session > 0 { context.session = FleetOrchestrator.sessionID(run: run, session: session) }
        devices[id] = context
        if context != before { pipeline?.identify(id, as: context) }
    }

    /// The fields of every line about a device.
    private func deviceMetadata(_ id: DeviceID) -> Logger.Metadata {
        ValueLog.deviceMetadata(id, devices[id] ?? ValuePipeline.JournalContext())
    }

    private func log(_ event: FleetEvent) {
        switch event {
        case .bluetoothdAppeared:
            logger.notice("bluetoothd appeared", metadata: ["event": "bluetoothd_appeared"])
        case .bluetoothdVanished:
            logger.warning("bluetoothd vanished; every device is suspended until it returns", metadata: ["event": "bluetoothd_vanished"])
        case .adapterPowerChanged(let adapter, let powered):
            logger.log(
                level: powered ? .info : .warning, powered ? "adapter powered" : "adapter powered off",
                metadata: ["adapter": "\(adapter)", "event": powered ? "adapter_powered" : "adapter_unpowered"])
        case .discoveryFailed(let adapter, let call, let failure, let inARow, let retryIn):
            // Each new error (`inARow` 1), and a repeated one at the 2nd, 4th, 8th, … in a row, so an
            // adapter that keeps refusing is seen without flooding the journal (status and
            // metrics count every one).
            guard inARow & (inARow - 1) == 0 else { break }
            logger.warning("discovery call failed", metadata: [
                "event": "discovery_failed", "adapter": "\(adapter)", "call": "\(call.methodName)",
                "bluez_error": "\(failure.name): \(failure.message)", "error_kind": "\(failure.kind)", "repeated": "\(inARow)",
                "retry_in": "\(retryIn)",
            ])
        case .addressTypeMismatch(let pinned, let heard, let definedAt):
            let place = definedAt.map { " (\($0))" } ?? ""
            logger.warning(
                "pinned \(pinned.address) (\(pinned.addressType.rawValue)) is not heard, but a \(heard.addressType.rawValue) address like it is: set address_type = \"\(heard.addressType.rawValue)\" in its pin\(place), or it is never found",
                metadata: deviceMetadata(pinned).merging([
                    "event": "address_type_mismatch", "address_type": "\(pinned.addressType.rawValue)",
                    "heard_address_type": "\(heard.addressType.rawValue)",
                ]) { $1 })
        case .evicted(let device, let adapter, let reason):
            logger.info("evicting pool device", metadata: deviceMetadata(device).merging([
                "adapter": "\(adapter)", "event": "evicted", "reason": "\(reason)",
            ]) { $1 })
        case .lifecycle(let id, let lifecycle, _, _):
            log(id, lifecycle)
        case .deviceUpdated(let device):
            var metadata = deviceMetadata(device.id)
            metadata["event"] = "device_updated"
            metadata["pinned"] = "\(device.pinned)"
            metadata["held"] = "\(device.held)"
            if let className = device.className { metadata["class"] = "\(className)" }
            logger.info(
                "device now \(device.pinned ? "pinned" : "a pool device")\(device.held ? ", held disconnected" : "")",
                metadata: metadata)
        case .runtimePinsChanged(let pins):
            logger.notice("run-time pins changed", metadata: [
                "event": "runtime_pins_changed", "pinned": "\(pins.map(\.id.address.description).joined(separator: " "))",
            ])
        case .writeFinished(let id, let failure?):
            logger.warning("write failed", metadata: deviceMetadata(id).merging([
                "event": "write_failed", "bluez_error": "\(failure.name): \(failure.message)",
            ]) { $1 })
        case .readFinished(let id, let characteristic, let failure?):
            logger.warning("read failed", metadata: deviceMetadata(id).merging([
                "event": "read_failed", "characteristic": "\(characteristic)", "bluez_error": "\(failure.name): \(failure.message)",
            ]) { $1 })
        case .linkLossExplained(let id, let adapter, let cause, let ago):
            logger.notice("the link loss was \(Self.phrase(cause))", metadata: deviceMetadata(id).merging([
                "event": "link_loss_cause", "adapter": "\(adapter)", "cause": "\(cause.rawValue)",
                "lost_ago_ms": "\(Int(ago / .milliseconds(1)))",
            ]) { $1 })
        case .deviceAdded, .deviceRemoved, .attemptGranted, .reloaded, .learned, .writeFinished, .readFinished:
            break
        }
    }

    private func log(_ id: DeviceID, _ event: DeviceEffect.LifecycleEvent) {
        var metadata = deviceMetadata(id)
        metadata["event"] = "state_changed"
        switch event {
        case .stateChanged(let from, let to, _, let cause):
            metadata["device_state"] = "\(to.name)"
            metadata["previous_state"] = "\(from.name)"
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
        case .failed(let failureClass, let error, _):
            metadata["event"] = "failed"
            metadata["error_class"] = "\(failureClass.rawValue)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            if failureClass == .pairing {
                // Which way it failed: a wrong key and a refusal wait for an operator.
                let kind = error.map(BlueZErrorClassifier.classifyPairing) ?? .timedOut
                metadata["pairing_failure"] = "\(kind.rawValue)"
            }
            logger.warning("device failure: \(failureClass.rawValue)", metadata: metadata)
        case .setupProblem(let characteristic, let error, _):
            metadata["event"] = "setup_problem"
            metadata["characteristic"] = "\(characteristic)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            logger.warning("characteristic setup failed", metadata: metadata)
        case .failureWithdrawn(let failureClass, let cause, _):
            // The `failed` line before it stays in the journal; this one says it no longer counts.
            metadata["event"] = "failure_withdrawn"
            metadata["error_class"] = "\(failureClass.rawValue)"
            metadata["cause"] = "\(cause.rawValue)"
            logger.notice("device failure withdrawn: \(Self.phrase(cause)), not the device", metadata: metadata)
        }
    }

    /// What a link loss's cause was, as the journal's messages say it.
    private static func phrase(_ cause: FleetEvent.LinkLossCause) -> String {
        switch cause {
        case .adapterPoweredOff: "its adapter powered off"
        case .bluetoothdGone: "bluetoothd left"
        case .bluetoothdLeftLinksBehind: "the kernel closing a link a bluetoothd that went left behind"
        }
    }
}
