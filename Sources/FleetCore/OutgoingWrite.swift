/// A write a sender asks the scheduler to deliver to one characteristic of one device.
public struct OutgoingWrite: Hashable, Sendable {
    public var characteristic: OutgoingCharacteristic
    public var bytes: [UInt8]
    public var qos: OutgoingQoS
    public var mode: OutgoingWriteMode
    /// The value supersedes earlier values of the same characteristic (a setting, a state), so a
    /// still-queued earlier value may be replaced by it within the device's coalescing window.
    /// False by default: fragments of a framed message, commands and appends must never be.
    public var isReplaceable: Bool

    public init(
        characteristic: OutgoingCharacteristic,
        bytes: [UInt8],
        qos: OutgoingQoS = .normal,
        mode: OutgoingWriteMode = .automatic,
        isReplaceable: Bool = false
    ) {
        self.characteristic = characteristic
        self.bytes = bytes
        self.qos = qos
        self.mode = mode
        self.isReplaceable = isReplaceable
    }
}
