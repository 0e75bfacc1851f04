import Synchronization

/// Thrown when an awaited event did not happen in time.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String
    public let after: Duration
    public var description: String { "timed out after \(after) waiting for \(what)" }

    public init(what: String, after: Duration) {
        self.what = what
        self.after = after
    }
}

/// Waits for `operation` (an event, not a fixed delay) but gives up after `timeout`, so a broken
/// build fails a test instead of hanging it. The default is sized for the whole suite on two
/// cores beside `stress-ng --cpu 2`, where a test was seen starved for 39 s: it costs nothing
/// when the event comes.
public func withTimeout<T: Sendable>(
    _ timeout: Duration = .seconds(60), _ what: String = "the event",
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimedOut(what: what, after: timeout)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimedOut(what: what, after: timeout) }
        return first
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// The first element satisfying `predicate`, within `timeout`.
    public func first(
        within timeout: Duration, _ what: String = "a matching element", where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        try await withTimeout(timeout, what) {
            for try await element in self where predicate(element) { return element }
            throw TimedOut(what: "\(what) (the sequence ended)", after: timeout)
        }
    }
}

/// Like `withTimeout`, for an operation that may never end even when cancelled (a call to a
/// bluetoothd that does not answer, a wedged loop): after `timeout` the test goes on with
/// `TimedOut` and leaves the operation behind, where a task group would wait for it forever.
public func withAbandoningTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let waiter = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let worker = Mutex<[Task<Void, Never>]>([])
    defer { for task in worker.withLock({ $0 }) { task.cancel() } }
    return try await withCheckedThrowingContinuation { continuation in
        waiter.withLock { $0 = continuation }
        let finish: @Sendable (Result<T, any Error>) -> Void = { result in waiter.withLock { $0.take() }?.resume(with: result) }
        let run = Task {
            do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            finish(.failure(TimedOut(what: what, after: timeout)))
        }
        worker.withLock { $0 = [run, timer] }
    }
}
