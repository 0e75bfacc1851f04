/// Why the scheduler refused a write. The write is not queued; nothing else changes.
public enum OutgoingSchedulerError: Error, Hashable, Sendable {
    /// The device's queue for this class holds `depth` writes, its capacity.
    case queueFull(DeviceID, OutgoingQoS, depth: Int)
    /// The characteristic's flags do not allow the requested write type.
    case notWritable(OutgoingCharacteristic, OutgoingWriteMode)
    /// Longer than `OutgoingConfiguration.maxWriteSize`; fragment it with `Framer` first.
    case tooLarge(size: Int, limit: Int)
}
