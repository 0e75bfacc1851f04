import Synchronization

/// What a service hands to the services declared after it, published once it has started: the
/// fleet service's orchestrator, the state store service's store.
///
/// `ServiceSequence` starts a service only after the ones before it have started, so a later
/// service reads the value at once (`get()`), never waits for it; a value missing then means the
/// services were declared out of order, which `get()` reports rather than hanging.
public final class StartedValue<Value: Sendable>: Sendable {
    /// The service that publishes the value.
    public let producer: String
    private let value = Mutex<Value?>(nil)

    public init(of producer: String) {
        self.producer = producer
    }

    /// Called by the producer before it reports its start.
    public func publish(_ value: Value) {
        self.value.withLock { $0 = value }
    }

    /// The published value; throws when the producer has not started (declared later, or failed).
    public func get() throws(ServiceOrderError) -> Value {
        guard let value = value.withLock({ $0 }) else { throw ServiceOrderError(producer: producer) }
        return value
    }
}

/// A service asked for what another service had not published: it was declared before that one.
public struct ServiceOrderError: Error, CustomStringConvertible {
    public let producer: String

    public var description: String { "the \(producer) service has not started: declare it earlier in the sequence" }
}
