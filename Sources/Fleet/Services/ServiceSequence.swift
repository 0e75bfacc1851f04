import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// One part of the daemon (the state store, the BlueZ connection, the fleet, …) as a
/// `ServiceSequence` runs it.
///
/// `run` starts the part, calls `reportStarted()` once it is up (or has given up in a way the
/// daemon survives, e.g. metrics that cannot bind), waits for graceful shutdown, then stops the
/// part and returns. It throws when the daemon cannot run without the part, without having
/// reported a start. Anything it hands to later services (`StartedValue`) is published before
/// `reportStarted()`.
public protocol SequencedService: Sendable {
    /// The part's name in the group's logs and errors ("fleet", "control").
    var name: String { get }
    func run(reportStarted: @escaping @Sendable () -> Void) async throws
}

/// The daemon's parts run as one `ServiceGroup`, in the order of the array: each service's
/// `run` begins only once the service before it has reported its start, and graceful shutdown
/// (the group's) stops them in reverse order, each one's `run` returning before the one before
/// it is told to stop.
///
/// Guarantees:
/// - A service never starts before the one declared before it has started, so what it reads
///   from an earlier service's `StartedValue` is there.
/// - A service that throws stops the daemon gracefully: the services that started are stopped
///   in reverse order, those after it never start, and `ServiceGroup.run()` rethrows its error.
/// - A service still waiting for its turn when shutdown reaches it returns without starting.
public struct ServiceSequence: Sendable {
    public let services: [any SequencedService]

    public init(_ services: [any SequencedService]) {
        self.services = services
    }

    /// The group's service configurations: each service waits for the one before it.
    public var configurations: [ServiceGroupConfiguration.ServiceConfiguration] {
        var previous: StartGate?
        return services.map { service in
            let gate = StartGate()
            defer { previous = gate }
            return ServiceGroupConfiguration.ServiceConfiguration(
                service: SequencedRunner(service: service, previous: previous, gate: gate),
                // A service that returns on its own is a bug: the group fails.
                successTerminationBehavior: .cancelGroup,
                // One that cannot start stops the others gracefully (state saved, bus closed).
                failureTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: service.name)
        }
    }

    /// One `ServiceGroup` of the services, shut down gracefully on `gracefulShutdownSignals`.
    public func group(gracefulShutdownSignals: [UnixSignal], logger: Logger) -> ServiceGroup {
        ServiceGroup(configuration: ServiceGroupConfiguration(
            services: configurations, gracefulShutdownSignals: gracefulShutdownSignals, logger: logger))
    }
}

/// Runs one `SequencedService` once the one before it has started (or returns, without starting
/// it, when graceful shutdown or cancellation comes first).
struct SequencedRunner: Service, CustomStringConvertible {
    let service: any SequencedService
    let previous: StartGate?
    let gate: StartGate

    var description: String { service.name }

    func run() async throws {
        if let previous {
            let previousStarted: Bool
            do {
                try await cancelWhenGracefulShutdown { try await previous.wait() }
                previousStarted = true
            } catch {
                previousStarted = false
            }
            guard previousStarted else { return }
        }
        let gate = self.gate
        try await service.run(reportStarted: { gate.open() })
    }
}

/// Opened once, by the service that owns it when it has started; awaited by the service after it.
final class StartGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open; throws `CancellationError` if the task is cancelled first.
    func wait() async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Now { case proceed, cancelled, wait }
                let now = state.withLock { state -> Now in
                    if state.isOpen { return .proceed }
                    // Checked under the lock the cancellation handler takes: either it already
                    // ran (the flag is set) or it will find this waiter.
                    if Task.isCancelled { return .cancelled }
                    state.waiters[id] = continuation
                    return .wait
                }
                switch now {
                case .proceed: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
