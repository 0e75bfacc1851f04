/// A write a sender asks the scheduler to deliver to one characteristic of one device.
public struct OutgoingWrite: Hashable, Sendable {
    public var characteristic: OutgoingCharacteristic
    public var bytes: [UInt8]
    public var qos: OutgoingQoS
    public var mode: OutgoingWriteMode

    public init(characteristic: OutgoingCharacteristic, bytes: [UInt8], qos: OutgoingQoS = .normal, mode: OutgoingWriteMode = .automatic) {
        self.characteristic = characteristic
        self.bytes = bytes
        self.qos = qos
        self.mode = mode
    }
}
