import Foundation
import ProcessSupport
import Synchronization

/// `mosquitto_sub` on a private broker: a real peer that reads what the daemon publishes. Ready
/// once the broker acknowledged its subscription (SUBACK), so nothing published after `init`
/// returns is missed.
final class BrokerSubscriber: Sendable {
    struct Received: Sendable, Equatable {
        var retained: Bool
        var topic: String
        var payload: String
    }

    private let process: ChildProcess
    /// Every message received so far, oldest first: a wait looks at all of them, so the order in
    /// which a test waits does not have to be the order of publication.
    private let received = Mutex<[Received]>([])

    init(port: Int, topics: [String], extraArguments: [String] = []) throws {
        var arguments = ["-d", "-h", "127.0.0.1", "-p", "\(port)", "-F", "MSG %r %t %p", "-q", "1"] + extraArguments
        for topic in topics { arguments += ["-t", topic] }
        // mosquitto_sub's stdout is fully buffered on a pipe: line buffering, or nothing is seen
        // until it exits.
        process = try ChildProcess("/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub"] + arguments)
        var seen: [String] = []
        while true {
            guard let line = try? process.readLine(within: 10) else {
                throw ChildProcessError.noOutput("mosquitto_sub", "not subscribed in time; said: \(seen.joined(separator: " | "))")
            }
            seen.append(line)
            if line.hasPrefix("Subscribed") { break }
        }
    }

    deinit {
        process.terminate()
    }

    /// The next message, skipping mosquitto_sub's debug lines; throws after `seconds`.
    func next(within seconds: Double = 10) throws -> Received {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw ChildProcessError.noOutput("mosquitto_sub", "no message in time") }
            let line = try process.readLine(within: left)
            if ProcessInfo.processInfo.environment["WEARFLEET_MQTT_TRACE"] != nil { print("mosquitto_sub:", line) }
            guard line.hasPrefix("MSG ") else { continue }
            let fields = line.dropFirst(4).split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count >= 2 else { continue }
            return Received(retained: fields[0] == "1", topic: String(fields[1]), payload: fields.count > 2 ? String(fields[2]) : "")
        }
    }

    /// The first message received on `topic` matching `predicate`, among those received so far
    /// or, failing that, the next ones within `seconds`.
    func first(on topic: String, within seconds: Double = 10, where predicate: (Received) -> Bool = { _ in true }) throws -> Received {
        if let earlier = received.withLock({ $0.first { $0.topic == topic && predicate($0) } }) { return earlier }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let message = try next(within: max(0.001, deadline.timeIntervalSinceNow))
            received.withLock { $0.append(message) }
            if message.topic == topic, predicate(message) { return message }
        }
    }

    /// The message on `topic` after the first `skipping` ones, waiting for it within `seconds`.
    func message(on topic: String, skipping: Int, within seconds: Double = 10) throws -> Received {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let earlier = all(on: topic)
            if earlier.count > skipping { return earlier[skipping] }
            let message = try next(within: max(0.001, deadline.timeIntervalSinceNow))
            received.withLock { $0.append(message) }
        }
    }

    /// The messages received so far on `topic`.
    func all(on topic: String) -> [Received] {
        received.withLock { $0.filter { $0.topic == topic } }
    }
}
