import FleetCore

/// What a reload means beyond the fleet machine's own diff: the state file's record of which
/// devices are pinned, and the settings a running daemon cannot change. Pure.
public enum ConfigurationReload {
    /// A device whose pinned-or-pool membership the state file must now record.
    public struct MembershipChange: Equatable, Sendable {
        public let device: DeviceID
        public let membership: KnownDevice.Membership

        public init(device: DeviceID, membership: KnownDevice.Membership) {
            self.device = device
            self.membership = membership
        }
    }

    /// The membership changes a reload made: unpinned devices become pool devices, newly pinned
    /// ones pinned (in that order, so a device in both lists ends up pinned).
    public static func membershipChanges(after summary: FleetOrchestrator.ReloadSummary) -> [MembershipChange] {
        summary.pinnedRemoved.map { MembershipChange(device: $0, membership: .pool) }
            + summary.pinnedAdded.map { MembershipChange(device: $0, membership: .pinned) }
    }

    /// The settings read only at start-up that differ between `old` and `new`, named as in the
    /// file (`daemon.log_level`, `daemon.state_debounce`, `metrics`): a reload cannot apply them,
    /// so the daemon reports them as needing a restart rather than pretend they were applied.
    public static func restartOnlyChanges(from old: WearfleetConfiguration, to new: WearfleetConfiguration) -> [String] {
        var changed: [String] = []
        if new.daemon.logLevel != old.daemon.logLevel { changed.append("daemon.log_level") }
        if new.daemon.stateDebounce != old.daemon.stateDebounce { changed.append("daemon.state_debounce") }
        if new.daemon.forgetAfter != old.daemon.forgetAfter { changed.append("daemon.forget_after") }
        if new.metrics != old.metrics { changed.append("metrics") }
        return changed
    }
}

extension StateStore {
    /// Records `changes` for the devices the store knows; a device it does not know yet is
    /// recorded with its membership when the fleet first learns something about it.
    public func record(_ changes: [ConfigurationReload.MembershipChange]) {
        for change in changes {
            modifyIfKnown(change.device) { $0.membership = change.membership }
        }
    }
}
