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
        try await withTaskCancellationHandler(
            operation: {
                try await withCheckedThrowingContinuation(isolation: self) { (continuation: CheckedContinuation<Void, any Error>) in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        notificationWaiters[id] = NotificationWaiter(total: total, continuation: continuation)
                    }
                }
            },
            onCancel: {
                Task { await self.cancelNotificationWaiter(id) }
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
