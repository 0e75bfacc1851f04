import FleetCore
import GATT
import Logging

/// The journal's consumer of values: the first value of each class a device sends, every value
/// at debug level, and undecodable bytes at 1, 2, 4, 8, … errors per device. The pipeline asks
/// it only with what it has already counted, so a value that is not logged costs one comparison.
struct ValueLog: Sendable {
    private let logger: Logger
    /// Whether every value is logged (debug level): asked once, because asking the logger
    /// copies its handler out, per value. The logger is a copy of its own, so its level cannot
    /// change after this.
    private let logsEveryValue: Bool

    init(logger: Logger) {
        self.logger = logger
        logsEveryValue = logger.logLevel <= .debug
    }

    /// The metadata is built only when the level is on (the arguments are autoclosures).
    func decoded(
        _ event: CharacteristicEvent, first: Bool, device: DeviceID, characteristic: String,
        context: @autoclosure () -> ValuePipeline.JournalContext
    ) {
        guard first || logsEveryValue else { return }
        func metadata() -> Logger.Metadata {
            Self.deviceMetadata(device, context()).merging([
                "characteristic": "\(characteristic)", "event": "\(event.name)", "value": "\(event.summary)",
            ]) { $1 }
        }
        if first {
            logger.info("first \(event.name) from device", metadata: metadata())
        } else {
            logger.debug("\(event.name)", metadata: metadata())
        }
    }

    func undecodable(
        _ error: GATTDecodeError, errors: Int, device: DeviceID, characteristic: String,
        context: @autoclosure () -> ValuePipeline.JournalContext
    ) {
        guard errors & (errors - 1) == 0 else { return }
        logger.warning(
            "undecodable value from device",
            metadata: Self.deviceMetadata(device, context()).merging([
                "characteristic": "\(characteristic)", "decode_error": "\(error)", "decode_errors": "\(errors)",
            ]) { $1 })
    }

    /// The device fields every value line carries (those known).
    static func deviceMetadata(_ device: DeviceID, _ context: ValuePipeline.JournalContext) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["device_address": "\(device.address)"]
        if let name = context.name { metadata["device_name"] = "\(name)" }
        if let adapter = context.adapter { metadata["adapter"] = "\(adapter)" }
        if let session = context.session { metadata["session_id"] = "\(session)" }
        return metadata
    }
}
