/// Where journald entries go. Production uses `SDJournalTransport`; tests use a
/// `JournalDatagramTransport` bound to a socket of their own.
///
/// Implementations must be safe to call from any thread (log handlers are), and must never block
/// for long or throw: a logging failure is not the caller's problem.
public protocol JournalTransport: Sendable {
    /// Sends one entry. Returns 0 on success (or when there is no journald, as libsystemd does),
    /// or a negative errno.
    @discardableResult
    func send(_ fields: [JournalField]) -> Int32
}
