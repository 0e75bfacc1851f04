import BlueZSimulator
import Foundation
import Glibc
import Testing
import TestSupport

/// wearfleetd through a broker outage of 30 s while the fleet notifies faster than the MQTT
/// client's queue holds: the BLE links are never touched, the queue keeps its bound (the newest
/// values, the oldest dropped), every drop is counted on the metrics endpoint, and the retained
/// state comes back with the broker. A suite of its own, so it runs beside the other daemon tests.
@Suite("wearfleetd through a 30 s broker outage")
struct WearfleetdMQTTOutageTests {
    /// Values and command results the client keeps while the broker is away (README, "When the
    /// broker is away": the capacity `MQTTService` gives `MQTTClient`).
    static let bound = 10_000
    /// The motion band's stream during the outage: the queue is full after 20 s of it.
    static let bandRateHz = 500.0
    static let outage: Duration = .seconds(30)

    @Test func aThirtySecondOutageKeepsTheLinksAndTheNewestValuesAndCountsEveryDrop() async throws {
        // No broker-side limit on what waits for a subscriber: whatever the daemon publishes after
        // it reconnects reaches the test's subscriber.
        let broker = try PrivateBroker(configuration: "allow_anonymous true\nmax_queued_messages 0")
        let metricsPort = try PrivateBroker.freeLoopbackPort()
        // The band's values over its AcquireNotify socket: at this rate, D-Bus signals from the
        // in-process simulator would load the task pool the other suites' simulators share.
        let daemon = try await MQTTDaemon(broker: broker, metricsPort: metricsPort, bandClass: "fd_path = true")
        let simulator = daemon.simulator
        let watch = "wearfleet/device/\(MQTTDaemon.watchSegment)"
        let band = "wearfleet/device/\(MQTTDaemon.bandSegment)"
        do {
            let states = try await BrokerSubscriber(port: broker.port, topics: ["\(watch)/state", "\(band)/state"])
            for topic in ["\(watch)/state", "\(band)/state"] {
                _ = try await states.first(on: topic, within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
            }
        }
        try await daemon.line(containing: "mqtt: connected")

        // The band streams at 500 Hz; with the broker there, nothing is dropped.
        try await simulator.setMotionStream(device: MQTTDaemon.band, rateHz: Self.bandRateHz, payloadSize: 20)
        let streamStarted = await simulator.counterSnapshot().totalNotificationsSent
        try await withTimeout(.seconds(30), "1,000 notifications at 500 Hz") {
            try await simulator.waitForNotificationsSent(reaching: streamStarted + 1_000)
        }
        let linked = await simulator.counterSnapshot()
        let beforeOutage = try await Exposition.scrape(port: metricsPort)
        #expect(beforeOutage.value("wearfleet_mqtt_connected") == 1)
        #expect(beforeOutage.value("wearfleet_mqtt_dropped_total") == 0)

        // The broker goes away for 30 s while the band keeps streaming.
        let clock = ContinuousClock()
        let brokerDown = clock.now
        broker.stop()
        try await daemon.line(containing: "mqtt: lost the broker")
        let lossNoticed = Date()
        let atLoss = try await Exposition.scrape(port: metricsPort)
        let sentAtLoss = await simulator.counterSnapshot().totalNotificationsSent
        #expect(atLoss.value("wearfleet_mqtt_connected") == 0)
        // The outage's length is the scenario's (a deadline on the clock, nothing to wait for);
        // within it the fleet must have offered more than the queue holds, which is waited for.
        try await Task.sleep(until: brokerDown + Self.outage, clock: clock)
        try await withTimeout(.seconds(60), "the bound and 3,000 more notifications during the outage") {
            try await simulator.waitForNotificationsSent(reaching: sentAtLoss + Self.bound + 3_000)
        }
        let endOfOutage = try await Exposition.scrape(port: metricsPort)
        // From now on the fleet is quiet (the band at 1 Hz, the watch as always), so the moments
        // around the reconnection that the checks below leave open hold few values.
        try await simulator.setMotionStream(device: MQTTDaemon.band, rateHz: 1, payloadSize: 20)
        #expect(endOfOutage.value("wearfleet_mqtt_connected") == 0)
        // Nothing was handed to libmosquitto while the broker was away.
        #expect(endOfOutage.value("wearfleet_mqtt_published_total") == atLoss.value("wearfleet_mqtt_published_total"))
        // It kept trying, backing off: a fixed 0.5 s retry would have made 60 attempts.
        let attempts = try #require(endOfOutage.value("wearfleet_mqtt_reconnects_total"))
            - (beforeOutage.value("wearfleet_mqtt_reconnects_total") ?? 0)
        #expect((2...10).contains(attempts))
        #expect(try #require(endOfOutage.value("wearfleet_mqtt_dropped_total")) > 0)

        // The broker comes back (empty: it kept nothing) when the daemon's next attempt is at
        // least 2 s away, so the subscriber is on it before the daemon and sees all it publishes.
        try await Self.awaitAttemptWindow(daemon, failedAttempts: Int(attempts))
        try broker.restart()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#"])
        try await daemon.line(containing: "mqtt: connected", count: 2, within: .seconds(90))
        let reconnected = try #require(daemon.linesSeen(containing: "mqtt: connected").last.flatMap { Self.logTime($0) })
        let online = try await subscriber.first(on: "wearfleet/gateway/gw1/status")
        #expect(online.payload == "online")
        try #require(!online.retained, "the subscriber was on the broker after the daemon's first messages")
        // The queue goes out first; the first value the daemon received after reconnecting
        // comes after all of it.
        _ = try await subscriber.newest(within: .seconds(30), "a value received after the reconnection") { message in
            Self.isValue(message.topic) && (Self.valueTime(message) ?? 0) > reconnected
        }
        let afterReconnect = try await Exposition.scrape(port: metricsPort)

        // What the queue kept: exactly the bound (drops happened, so it was full), all of it
        // received before the first hand-over after the reconnection (within 0.5 s of its log
        // line), all of it newer than the loss (the oldest went first). Every value received a
        // second before the reconnection was in the queue or dropped by then (the daemon's value
        // path lags by far less), so at most the bound of those arrive.
        let times = subscriber.received.filter { Self.isValue($0.topic) }.compactMap(Self.valueTime)
        let kept = times.filter { $0 < reconnected }
        let keptBeforeTheLastSecond = times.filter { $0 < reconnected - 1_000_000 }.count
        let keptWithTheFirstHandOver = times.filter { $0 < reconnected + 500_000 }.count
        #expect(keptBeforeTheLastSecond <= Self.bound)
        #expect(keptWithTheFirstHandOver >= Self.bound)
        #expect(kept.allSatisfy { $0 > Self.microseconds(lossNoticed) })
        // Every value the daemon received during the outage beyond the bound was dropped and counted.
        let receivedInOutage = Int(endOfOutage.sum("wearfleet_device_notifications_total") - atLoss.sum("wearfleet_device_notifications_total"))
        let dropped = Int(try #require(afterReconnect.value("wearfleet_mqtt_dropped_total")))
        #expect(receivedInOutage > Self.bound)
        #expect(dropped >= receivedInOutage - Self.bound)
        #expect(dropped <= Int(afterReconnect.sum("wearfleet_device_notifications_total") - beforeOutage.sum("wearfleet_device_notifications_total")))
        #expect(afterReconnect.value("wearfleet_mqtt_connected") == 1)
        if ProcessInfo.processInfo.environment["WEARFLEET_MQTT_TRACE"] != nil {
            let reconnectedAfter = Double(reconnected - Self.microseconds(lossNoticed)) / 1e6
            print(
                "outage: \(receivedInOutage) values received in the 30 s, \(dropped) dropped, of the bound \(Self.bound) arrived",
                "\(keptBeforeTheLastSecond) received before the last second, \(kept.count) before the reconnection,",
                "\(keptWithTheFirstHandOver) with the first hand-over; \(Int(attempts)) attempts, reconnected \(reconnectedAfter) s after the loss")
        }

        // The retained state is on the broker again, for whoever subscribes now.
        let late = try await BrokerSubscriber(port: broker.port, topics: ["\(watch)/state", "\(band)/state", "wearfleet/gateway/gw1/status"])
        for topic in ["\(watch)/state", "\(band)/state"] {
            let state = try await late.first(on: topic)
            #expect(state.retained && state.payload.contains("\"state\":\"ready\""))
        }
        let status = try await late.first(on: "wearfleet/gateway/gw1/status")
        #expect(status.retained && status.payload == "online")

        // Connected again, a 500 Hz stream drops nothing: the drops were the outage's.
        try await simulator.setMotionStream(device: MQTTDaemon.band, rateHz: Self.bandRateHz, payloadSize: 20)
        let restreamed = await simulator.counterSnapshot().totalNotificationsSent
        try await withTimeout(.seconds(30), "2,000 notifications at 500 Hz") {
            try await simulator.waitForNotificationsSent(reaching: restreamed + 2_000)
        }
        let settled = try await Exposition.scrape(port: metricsPort)
        #expect(settled.value("wearfleet_mqtt_dropped_total") == Double(dropped))
        #expect(try #require(settled.value("wearfleet_mqtt_published_total")) >= (afterReconnect.value("wearfleet_mqtt_published_total") ?? 0) + 2_000)

        // The links were never touched: no link dropped, no new attempt, every notification read.
        let after = await simulator.counterSnapshot()
        #expect(after.linkDrops == linked.linkDrops)
        #expect(after.connectAttempts == linked.connectAttempts)
        #expect(after.notificationsDropped == linked.notificationsDropped)
        for address in [MQTTDaemon.watch, MQTTDaemon.band] {
            #expect(settled.value("wearfleet_device_state", ["address": address, "state": "ready"]) == 1)
        }
        #expect(await daemon.stop() == 0)
        await simulator.stop()
    }

    // MARK: - Helpers

    /// Returns once the daemon's next connection attempt is at least 2 s away, read from its log
    /// (`… next attempt in 7.5 seconds` after each failed one, `failedAttempts` of them so far):
    /// when the pending one is due sooner, after it has failed too.
    static func awaitAttemptWindow(_ daemon: MQTTDaemon, failedAttempts: Int) async throws {
        let failure = "mqtt: cannot reach the broker"
        var count = max(failedAttempts, 1)
        while true {
            try await daemon.line(containing: failure, count: count, within: .seconds(90))
            let line = daemon.linesSeen(containing: failure)[count - 1]
            let logged = try #require(logTime(line), "no time in: \(line)")
            let delay = try #require(nextAttemptDelay(line), "no next attempt in: \(line)")
            if logged + Int64(delay * 1_000_000) - microseconds(Date()) >= 2_000_000 { return }
            count += 1
        }
    }

    /// A value's topic: under a device, neither its state nor its commands.
    static func isValue(_ topic: String) -> Bool {
        topic.hasPrefix("wearfleet/device/") && !topic.hasSuffix("/state") && !topic.contains("/command")
    }

    /// The value JSON's `time` (when the daemon received it), in microseconds since 1970.
    static func valueTime(_ message: BrokerSubscriber.Received) -> Int64? {
        guard let object = try? jsonObject(message.payload), let time = object["time"] as? String else { return nil }
        return wallMicroseconds(time[...])
    }

    /// The time a console log line starts with.
    static func logTime(_ line: String) -> Int64? {
        line.split(separator: " ", maxSplits: 1).first.flatMap(wallMicroseconds)
    }

    /// The seconds in `… next attempt in 7.5 seconds`.
    static func nextAttemptDelay(_ line: String) -> Double? {
        guard let range = line.range(of: "next attempt in ") else { return nil }
        return line[range.upperBound...].split(separator: " ").first.flatMap { Double($0) }
    }

    static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down)) }

    /// `2026-11-24T21:04:28.123456Z` (any number of fraction digits) in microseconds since 1970.
    static func wallMicroseconds(_ text: Substring) -> Int64? {
        let characters = Array(text.utf8)
        guard characters.count >= 20, characters.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: characters[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        var micros: Int64 = 0
        if characters[19] == UInt8(ascii: ".") {
            let digits = characters[20..<(characters.count - 1)]
            guard !digits.isEmpty, digits.count <= 9, let fraction = Int64(String(decoding: digits, as: UTF8.self)) else { return nil }
            micros = digits.count >= 6 ? fraction / Int64(pow(10, Double(digits.count - 6))) : fraction * Int64(pow(10, Double(6 - digits.count)))
        }
        return Int64(timegm(&parts)) * 1_000_000 + micros
    }
}
