import Logging
import Testing
@testable import SystemdSupport

@Suite struct JournalEntryTests {
    private func entry(_ metadata: Logger.Metadata, level: Logger.Level = .warning) -> [JournalField] {
        JournalEntry.fields(
            level: level, message: "link lost\nsecond line", metadata: metadata, identifier: "wearfleetd",
            file: "Fleet/DeviceActor.swift", function: "handle(_:)", line: 42
        )
    }

    @Test func carriesTheStandardFieldsOnce() {
        let fields = entry([:])
        #expect(fields.map(\.name) == ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"])
        #expect(fields.map(\.text) == ["link lost\nsecond line", "4", "wearfleetd", "Fleet/DeviceActor.swift", "42", "handle(_:)"])
    }

    @Test func metadataBecomesUpperCaseFields() {
        let fields = entry([
            "device.address": "AA:BB:CC:DD:EE:FF", "device.name": "Polar H10", "adapter": "hci0",
            "session_id": "7", "device.state": "backingOff", "event": "disconnected",
            "error.class": "transient", "bluez.error": "org.bluez.Error.Failed: le-connection-abort-by-remote",
        ])
        let byName = Dictionary(fields.map { ($0.name, $0.text) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["DEVICE_ADDRESS"] == "AA:BB:CC:DD:EE:FF")
        #expect(byName["DEVICE_NAME"] == "Polar H10")
        #expect(byName["ADAPTER"] == "hci0")
        #expect(byName["SESSION_ID"] == "7")
        #expect(byName["DEVICE_STATE"] == "backingOff")
        #expect(byName["EVENT"] == "disconnected")
        #expect(byName["ERROR_CLASS"] == "transient")
        #expect(byName["BLUEZ_ERROR"] == "org.bluez.Error.Failed: le-connection-abort-by-remote")
    }

    @Test func metadataCannotOverrideTheHandlersFields() {
        let fields = entry(["message": "spoofed", "priority": "0", "_PID": "1"])
        #expect(fields.filter { $0.name == "MESSAGE" }.map(\.text) == ["link lost\nsecond line"])
        #expect(fields.filter { $0.name == "PRIORITY" }.map(\.text) == ["4"])
        #expect(fields.contains { $0.name == "META_MESSAGE" && $0.text == "spoofed" })
        #expect(fields.contains { $0.name == "META_PRIORITY" })
        #expect(fields.contains { $0.name == "PID" && $0.text == "1" })
        #expect(fields.allSatisfy { JournalField.isValidName($0.name) })
    }

    @Test func structuredValuesAreRenderedAsText() {
        let fields = entry(["services": ["180d", "180f"], "counts": ["a": "1"]])
        #expect(fields.contains { $0.name == "SERVICES" && $0.text == "[180d, 180f]" })
        #expect(fields.contains { $0.name == "COUNTS" && $0.text == "[a: 1]" })
    }

    @Test(arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func levelsMapToSyslogPriorities(level: Logger.Level, priority: Int) {
        #expect(entry([:], level: level).first { $0.name == "PRIORITY" }?.text == String(priority))
    }
}
