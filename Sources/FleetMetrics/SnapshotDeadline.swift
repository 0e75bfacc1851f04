import Fleet
import Synchronization

/// A scrape must not hang on a wedged orchestrator (the watchdog handles that): the snapshot is
/// awaited for a bounded time, and the scrape goes on without it when it does not come.
enum SnapshotDeadline {
    /// `FleetMetricsSnapshot.take(from:)`, or nil after `timeout`. A late snapshot is dropped.
    static func snapshot(of orchestrator: FleetOrchestrator, within timeout: Duration) async -> FleetMetricsSnapshot? {
        await withCheckedContinuation { (continuation: CheckedContinuation<FleetMetricsSnapshot?, Never>) in
            let once = ResumeOnce(continuation)
            Task { once.resume(returning: await FleetMetricsSnapshot.take(from: orchestrator)) }
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(returning: nil)
            }
        }
    }

    /// Resumes a continuation with the first value offered.
    private final class ResumeOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<FleetMetricsSnapshot?, Never>?>

        init(_ continuation: CheckedContinuation<FleetMetricsSnapshot?, Never>) { self.continuation = Mutex(continuation) }

        func resume(returning value: FleetMetricsSnapshot?) {
            continuation.withLock { $0.take() }?.resume(returning: value)
        }
    }
}
