/// Per-device scheduling options, chosen by the runtime from the device's class.
public struct OutgoingDeviceOptions: Hashable, Sendable {
    /// When set, a replaceable (`OutgoingWrite.isReplaceable`) `normal` or `bulk` write replaces
    /// the value of a replaceable write to the same characteristic (same class and write type)
    /// that is still queued and was first queued less than this long ago. The replaced write keeps its place in the queue, so
    /// coalescing never delays a value; it only drops values nobody will read. `control` writes
    /// are never coalesced.
    public var coalescingWindow: Duration?

    public init(coalescingWindow: Duration? = nil) {
        self.coalescingWindow = coalescingWindow
    }
}
