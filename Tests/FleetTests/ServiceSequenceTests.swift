import Fleet
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// The daemon's services run as one `ServiceGroup` in the order declared: recording services
/// that start at different speeds still start one after another, and stop in reverse.
@Suite("ServiceSequence: services start in declared order and stop in reverse")
struct ServiceSequenceTests {
    /// What the services did, in the order they did it.
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    struct Broken: Error, Equatable {}

    /// Takes `startTime` to start (or fails after it), then runs until graceful shutdown.
    /// `startsWhenToldToStop`: still starting until shutdown reaches it, however long that takes.
    struct Recording: SequencedService {
        let name: String
        let journal: Journal
        var startTime: Duration = .zero
        var fails = false
        var startsWhenToldToStop = false

        func run(reportStarted: @escaping @Sendable () -> Void) async throws {
            try await Task.sleep(for: startTime)
            if startsWhenToldToStop { try? await gracefulShutdown() }
            if fails {
                journal.append("fail \(name)")
                throw Broken()
            }
            journal.append("start \(name)")
            reportStarted()
            try? await gracefulShutdown()
            journal.append("stop \(name)")
        }
    }

    static let logger = Logger(label: "service-sequence-test") { _ in SwiftLogNoOpLogHandler() }

    static func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
        try await withTimeout(.seconds(60), what) {
            while !condition() { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    @Test func aSlowServiceStillStartsBeforeTheOnesDeclaredAfterItAndAllStopInReverse() async throws {
        let journal = Journal()
        // The first is the slowest to start, the last slower than the second: started at once, as
        // a bare ServiceGroup does, they would start in the order c, b, a.
        let group = ServiceSequence([
            Recording(name: "a", journal: journal, startTime: .milliseconds(80)),
            Recording(name: "b", journal: journal),
            Recording(name: "c", journal: journal, startTime: .milliseconds(20)),
        ]).group(gracefulShutdownSignals: [], logger: Self.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Self.waitUntil("all three to start") { journal.all.count == 3 }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(journal.all == ["start a", "start b", "start c", "stop c", "stop b", "stop a"])
    }

    @Test func aServiceThatCannotStartStopsTheStartedOnesAndTheLaterOnesNeverStart() async throws {
        let journal = Journal()
        let group = ServiceSequence([
            Recording(name: "a", journal: journal),
            Recording(name: "b", journal: journal, startTime: .milliseconds(20), fails: true),
            Recording(name: "c", journal: journal),
        ]).group(gracefulShutdownSignals: [], logger: Self.logger)
        await #expect(throws: Broken.self) { try await group.run() }
        #expect(journal.all == ["start a", "fail b", "stop a"])
    }

    @Test func shutdownDuringStartUpLetsTheStartingServiceFinishThenStopsIt() async throws {
        let journal = Journal()
        let group = ServiceSequence([
            Recording(name: "a", journal: journal, startsWhenToldToStop: true),
            Recording(name: "b", journal: journal),
        ]).group(gracefulShutdownSignals: [], logger: Self.logger)
        // Asked before the group runs: delivered as it starts, while "a" is still starting; "a"
        // is told only once "b" has returned.
        await group.triggerGracefulShutdown()
        try await group.run()
        #expect(journal.all == ["start a", "stop a"], "b, still waiting for its turn, never started")
    }

    @Test func aValueReadBeforeItsProducerStartedIsAnOrderErrorNotAWait() throws {
        let value = StartedValue<Int>(of: "fleet")
        #expect(throws: ServiceOrderError.self) { try value.get() }
        value.publish(7)
        #expect(try value.get() == 7)
    }
}
