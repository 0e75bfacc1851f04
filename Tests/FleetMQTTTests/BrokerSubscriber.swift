import Foundation
import ProcessSupport
import Synchronization
import TestSupport

/// `mosquitto_sub` on a private broker: a real peer that reads what the daemon publishes. Ready
/// once the broker acknowledged its subscription (SUBACK), so nothing published after `init`
/// returns is missed.
///
/// Its output is read on a thread of its own and waited for asynchronously: a blocking read on
/// the Swift concurrency pool would starve the in-process simulator the daemon talks to.
final class BrokerSubscriber: Sendable {
    struct Received: Sendable, Equatable {
        var retained: Bool
        var topic: String
        var payload: String
    }

    private let process: ChildProcess
    /// Every message received so far, oldest first: a wait looks at all of them, so the order in
    /// which a test waits does not have to be the order of publication.
    private let log = Log()

    private final class Log: Sendable {
        let messages = Mutex<[Received]>([])
    }
    private let arrivals: AsyncStream<Void>

    init(port: Int, topics: [String], extraArguments: [String] = []) async throws {
        var arguments = ["-d", "-h", "127.0.0.1", "-p", "\(port)", "-F", "MSG %r %t %p", "-q", "1"] + extraArguments
        for topic in topics { arguments += ["-t", topic] }
        // mosquitto_sub's stdout is fully buffered on a pipe: line buffering, or nothing is seen
        // until it exits.
        let process = try ChildProcess("/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub"] + arguments)
        self.process = process
        let (arrivals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.arrivals = arrivals
        let (subscribed, subscription) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let log = self.log
        Thread.detachNewThread {
            while let line = process.readLine() {
                if line.hasPrefix("Subscribed") { subscription.yield() }
                guard line.hasPrefix("MSG ") else { continue }
                let fields = line.dropFirst(4).split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count >= 2 else { continue }
                let message = Received(
                    retained: fields[0] == "1", topic: String(fields[1]), payload: fields.count > 2 ? String(fields[2]) : "")
                if ProcessInfo.processInfo.environment["WEARFLEET_MQTT_TRACE"] != nil { print("mosquitto_sub:", line) }
                log.messages.withLock { $0.append(message) }
                signal.yield()
            }
            subscription.finish()
            signal.finish()
        }
        _ = try await subscribed.first(within: .seconds(10), "mosquitto_sub's SUBACK") { _ in true }
    }

    deinit {
        process.terminate()
    }

    /// The first message received on `topic` matching `predicate`, among those received so far
    /// or the next ones within `timeout`.
    func first(
        on topic: String, within timeout: Duration = .seconds(60), where predicate: @escaping @Sendable (Received) -> Bool = { _ in true }
    ) async throws -> Received {
        try await waitFor("a message on \(topic)", within: timeout) { messages in
            messages.first { $0.topic == topic && predicate($0) }
        }
    }

    /// The message on `topic` after the first `skipping` ones.
    func message(on topic: String, skipping: Int, within timeout: Duration = .seconds(60)) async throws -> Received {
        try await waitFor("message \(skipping + 1) on \(topic)", within: timeout) { messages in
            let matching = messages.filter { $0.topic == topic }
            return matching.count > skipping ? matching[skipping] : nil
        }
    }

    /// The messages received so far on `topic`.
    func all(on topic: String) -> [Received] {
        log.messages.withLock { $0.filter { $0.topic == topic } }
    }

    /// Every message received so far, oldest first.
    var received: [Received] { log.messages.withLock { $0 } }

    /// The newest message, once one satisfying `predicate` is the newest: each arrival looks at
    /// one message, not at all of them, so waiting costs nothing on a subscription that takes
    /// thousands of values.
    func newest(
        within timeout: Duration = .seconds(60), _ what: String, where predicate: @escaping @Sendable (Received) -> Bool
    ) async throws -> Received {
        try await waitFor(what, within: timeout) { messages in messages.last.flatMap { predicate($0) ? $0 : nil } }
    }

    private func waitFor(
        _ what: String, within timeout: Duration, _ find: @escaping @Sendable ([Received]) -> Received?
    ) async throws -> Received {
        if let found = log.messages.withLock({ find($0) }) { return found }
        return try await withTimeout(timeout, what) {
            for await _ in self.arrivals {
                if let found = self.log.messages.withLock({ find($0) }) { return found }
            }
            throw TimedOut(what: "\(what) (mosquitto_sub ended)", after: timeout)
        }
    }
}
