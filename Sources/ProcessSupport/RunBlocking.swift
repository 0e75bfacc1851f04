import Dispatch
import Synchronization

/// Runs `body` in a task and blocks the calling (main) thread until it finishes.
///
/// For the benchmarks' synchronous drivers and roles. They could use an async top-level
/// instead, but then the main thread parks in libdispatch's `dispatch_main`, whose `sigsuspend`
/// on a read-only signal mask crashes valgrind, and callgrind on these binaries is how their
/// costs are profiled. Never call it from a task: it blocks a thread of the cooperative pool.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let finished = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        finished.signal()
    }
    finished.wait()
    // The task stored its result before signalling.
    guard let result = outcome.withLock({ $0 }) else { fatalError("runBlocking: the task ended without a result") }
    return try result.get()
}
