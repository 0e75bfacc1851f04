extension DeviceStateMachine {
    /// What has happened on the current link; starts empty on every link.
    struct LinkProgress: Hashable, Sendable {
        var servicesKnown = false
        var pendingReads: Set<String> = []
        var pendingSubscriptions: Set<String> = []
        var failedSubscriptions: Set<String> = []
        var setupFinished = false
        var outstandingWrites = 0
        var consecutiveWriteFailures = 0
    }
}
