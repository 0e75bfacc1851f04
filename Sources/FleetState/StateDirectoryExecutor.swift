import Dispatch

/// The serial executor of the actors that write the state directory (`StateStore`,
/// `RuntimePinsFile`): a dispatch queue of its own, so their `fsync`s, which can take tens of
/// milliseconds on an SD card and seconds on a busy one, block one of its threads and never one
/// of the few threads of the concurrency pool that every other task of the daemon runs on.
final class StateDirectoryExecutor: SerialExecutor {
    /// One queue for every writer of the state directory: their writes go one at a time anyway.
    static let shared = StateDirectoryExecutor(label: "wearfleet-state")

    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
