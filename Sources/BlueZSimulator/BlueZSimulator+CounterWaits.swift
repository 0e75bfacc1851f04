// Waiting for the counters instead of polling them: a test that needs "N more notifications
// sent" (a load that has run long enough) suspends until the notification that makes it true.

/// One caller of `waitForNotificationsSent(reaching:)`.
struct NotificationWaiter {
    let total: Int
    let continuation: CheckedContinuation<Void, any Error>
}

extension BlueZSimulator {
    /// Returns once `counterSnapshot().totalNotificationsSent` has reached `total` (at once when it
    /// has). Throws `CancellationError` when the waiting task is cancelled, so a timeout around
    /// the wait ends it.
    public func waitForNotificationsSent(reaching total: Int) async throws {
        guard counters.totalNotificationsSent < total else { return }
        let id = nextNotificationWaiter
        nextNotificationWaiter += 1
        try await park(
            { notificationWaiters[id] = NotificationWaiter(total: total, continuation: $0) },
            unpark: { await $0.cancelNotificationWaiter(id) })
    }

    /// Suspends the caller until the continuation `keep` stores is resumed. A caller cancelled
    /// meanwhile is resumed with `CancellationError` (`unpark` must find and resume it), so a
    /// timeout around the wait ends it.
    func park(
        _ keep: (CheckedContinuation<Void, any Error>) -> Void,
        unpark: @escaping @Sendable (BlueZSimulator) async -> Void
    ) async throws {
        try await withTaskCancellationHandler(
            operation: {
                try await withCheckedThrowingContinuation(isolation: self) { (continuation: CheckedContinuation<Void, any Error>) in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        keep(continuation)
                    }
                }
            },
            onCancel: {
                Task { await unpark(self) }
            },
            isolation: self)
    }

    /// Counts one notification delivered by `address` and releases the waiters whose total it
    /// reaches.
    func countNotificationSent(by address: String) {
        counters.countNotificationSent(by: address)
        guard !notificationWaiters.isEmpty else { return }
        let total = counters.totalNotificationsSent
        for (id, waiter) in notificationWaiters where waiter.total <= total {
            notificationWaiters[id] = nil
            waiter.continuation.resume()
        }
    }

    private func cancelNotificationWaiter(_ id: Int) {
        notificationWaiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }
}
