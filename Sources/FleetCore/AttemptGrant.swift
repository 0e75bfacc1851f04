/// Permission for one device to start one connection attempt on one adapter now.
///
/// The runtime hands it to the device (`attemptGranted(adapter:)`) and must report the end of the
/// attempt, however it ends, with `PoolPolicy.attemptFinished(device:)`: until then the adapter
/// counts the attempt as in flight.
public struct AttemptGrant: Hashable, Sendable {
    public var device: DeviceID
    public var adapter: AdapterID

    public init(device: DeviceID, adapter: AdapterID) {
        self.device = device
        self.adapter = adapter
    }
}
