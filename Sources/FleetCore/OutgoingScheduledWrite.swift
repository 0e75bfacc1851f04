/// A write the runtime should perform now. A `withResponse` write must be followed by
/// `OutgoingScheduler.writeCompleted(device:)` when the device answers (or the write fails).
public struct OutgoingScheduledWrite: Hashable, Sendable {
    public var device: DeviceID
    public var characteristic: OutgoingCharacteristic
    public var bytes: [UInt8]
    public var qos: OutgoingQoS
    public var writeType: OutgoingWriteType
    /// Increases by one for every write accepted by the scheduler, across all devices; for logs.
    public var sequence: UInt64

    public init(device: DeviceID, characteristic: OutgoingCharacteristic, bytes: [UInt8], qos: OutgoingQoS, writeType: OutgoingWriteType, sequence: UInt64) {
        self.device = device
        self.characteristic = characteristic
        self.bytes = bytes
        self.qos = qos
        self.writeType = writeType
        self.sequence = sequence
    }
}
