import Dispatch
import Foundation
import Synchronization

/// The one thread on which every `ChildProcess`'s supervising task runs (swift-subprocess's
/// `run`, its reads of the child's output, the wait for its exit).
///
/// `ChildProcess`'s callers block (a read with a deadline, `terminate()`), often on a thread of
/// the Swift concurrency pool, which has 2 threads on these machines. Were the supervising tasks
/// on that pool too, two callers blocked at once (two tests starting a `PrivateBus`) would wait
/// for tasks that no thread is left to run. On this thread they always run: nothing here blocks
/// for longer than a spawn or the reaping of a child that has already exited.
final class ChildProcessExecutor: TaskExecutor {
    static let shared = ChildProcessExecutor()

    private let jobs = Mutex<[UnownedJob]>([])
    /// Signalled once per job enqueued.
    private let queued = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                queued.wait()
                guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = "child-processes"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        queued.signal()
    }
}
