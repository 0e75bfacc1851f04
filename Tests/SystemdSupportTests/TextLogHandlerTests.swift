import Foundation
import Logging
import Testing
@testable import SystemdSupport

@Suite struct TextLogHandlerTests {
    private let time = Date(timeIntervalSince1970: 1_795_377_481.123)  // 2026-11-22T19:58:01.123Z

    @Test func consoleLineIsReadableAndSingleLine() {
        let line = ConsoleLogHandler.line(
            time: time, level: .warning, message: "link lost\nretrying",
            metadata: ["device.address": "AA:BB:CC:DD:EE:FF", "device.name": "Polar H10", "attempt": "3"]
        )
        #expect(line == #"2026-11-22T19:58:01.123Z warning  link lost\nretrying attempt=3 device.address=AA:BB:CC:DD:EE:FF device.name="Polar H10""#)
    }

    @Test func consoleHandlerWritesThroughItsSink() {
        let sink = MemoryLogSink()
        var logger = Logger(label: "test") { _ in ConsoleLogHandler(sink: sink, now: { Date(timeIntervalSince1970: 0) }) }
        logger[metadataKey: "adapter"] = "hci0"
        logger.debug("hidden below the level")
        logger.info("adapter powered", metadata: ["quote": "say \"hi\""])
        #expect(sink.lines == [#"1970-01-01T00:00:00.000Z info     adapter powered adapter=hci0 quote="say \"hi\"""#])
    }

    @Test func everyLevelIsSeparatedFromTheMessage() {
        for level in Logger.Level.allCases {
            let line = ConsoleLogHandler.line(time: time, level: level, message: "m", metadata: [:])
            #expect(line.hasSuffix(" m"))
            #expect(line.split(separator: " ", omittingEmptySubsequences: true).count == 3)
        }
    }

    @Test func jsonLineHasStableKeyOrderAndParses() throws {
        let line = JSONLinesLogHandler.line(
            time: time, level: .error, message: "write failed\t\"x\"\u{1}",
            metadata: ["z": "last", "a": ["1", "2"], "m": ["k": "v"]],
            source: "Fleet", file: "Fleet/DeviceActor.swift", function: "write()", line: 7
        )
        #expect(line == #"{"time":"2026-11-22T19:58:01.123Z","level":"error","message":"write failed\t\"x\"\u0001","metadata":{"a":["1","2"],"m":{"k":"v"},"z":"last"},"source":"Fleet","file":"Fleet/DeviceActor.swift","line":7,"function":"write()"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "write failed\t\"x\"\u{1}")
        #expect(!line.contains("\n"))
    }

    @Test func jsonHandlerWritesOneObjectPerEvent() throws {
        let sink = MemoryLogSink()
        let logger = Logger(label: "test") { _ in JSONLinesLogHandler(sink: sink) }
        logger.info("one", metadata: ["device.address": "AA:BB:CC:DD:EE:FF"])
        logger.error("two\nlines")
        #expect(sink.lines.count == 2)
        for line in sink.lines { _ = try JSONSerialization.jsonObject(with: Data(line.utf8)) }
    }
}
