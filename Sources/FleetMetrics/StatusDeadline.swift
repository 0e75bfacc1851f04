import Fleet
import Synchronization

/// A scrape must not hang on a wedged orchestrator (the watchdog handles that): the status is
/// awaited for a bounded time, and the scrape goes on without it when it does not come.
enum StatusDeadline {
    /// `orchestrator.status()`, or nil after `timeout`. A late status is dropped.
    static func status(of orchestrator: FleetOrchestrator, within timeout: Duration) async -> FleetStatus? {
        await withCheckedContinuation { (continuation: CheckedContinuation<FleetStatus?, Never>) in
            let once = ResumeOnce(continuation)
            Task { once.resume(returning: await orchestrator.status()) }
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(returning: nil)
            }
        }
    }

    /// Resumes a continuation with the first value offered.
    private final class ResumeOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<FleetStatus?, Never>?>

        init(_ continuation: CheckedContinuation<FleetStatus?, Never>) { self.continuation = Mutex(continuation) }

        func resume(returning value: FleetStatus?) {
            continuation.withLock { $0.take() }?.resume(returning: value)
        }
    }
}
