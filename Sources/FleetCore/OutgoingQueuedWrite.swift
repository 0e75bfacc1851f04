/// A write waiting in a device's queue, with its write type already resolved.
struct OutgoingQueuedWrite: Hashable, Sendable {
    var characteristic: OutgoingCharacteristic
    var bytes: [UInt8]
    var writeType: OutgoingWriteType
    var isReplaceable: Bool
    /// When the write was first queued; coalescing replaces bytes but keeps this.
    var enqueuedAt: MonotonicInstant
    var sequence: UInt64

    /// What the write costs in the round robin: its length, and at least one so empty writes are
    /// not free.
    var cost: Int { max(1, bytes.count) }
}
