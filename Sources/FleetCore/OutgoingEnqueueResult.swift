/// What `OutgoingScheduler.enqueue` did with an accepted write.
public enum OutgoingEnqueueResult: Hashable, Sendable {
    /// Appended to its queue.
    case queued
    /// Replaced the value of a queued write to the same characteristic (coalescing window).
    case coalesced
}
