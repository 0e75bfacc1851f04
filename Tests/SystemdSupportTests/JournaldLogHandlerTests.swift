import Foundation
import Logging
import Testing
@testable import SystemdSupport

@Suite struct JournaldLogHandlerTests {
    @Test func aLoggedEventArrivesAsOneNativeEntry() async throws {
        let journal = try DatagramSocket()
        var logger = Logger(label: "test") { _ in
            JournaldLogHandler(identifier: "wearfleetd", logLevel: .debug,
                               transport: JournalDatagramTransport(socketPath: journal.path))
        }
        logger[metadataKey: "device.address"] = "AA:BB:CC:DD:EE:FF"
        logger[metadataKey: "adapter"] = "hci0"
        let line: UInt = #line + 1
        logger.warning("link lost\nafter 3 s", metadata: ["event": "disconnected", "session_id": "12"])

        let fields = try #require(JournalWireFormat.decode(try await journal.receive()))
        let byName = Dictionary(fields.map { ($0.name, $0.text) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["MESSAGE"] == "link lost\nafter 3 s")
        #expect(byName["PRIORITY"] == "4")
        #expect(byName["SYSLOG_IDENTIFIER"] == "wearfleetd")
        #expect(byName["CODE_FILE"]?.hasSuffix("JournaldLogHandlerTests.swift") == true)
        #expect(byName["CODE_LINE"] == String(line))
        #expect(byName["CODE_FUNC"] == "aLoggedEventArrivesAsOneNativeEntry()")
        #expect(byName["DEVICE_ADDRESS"] == "AA:BB:CC:DD:EE:FF")
        #expect(byName["ADAPTER"] == "hci0")
        #expect(byName["EVENT"] == "disconnected")
        #expect(byName["SESSION_ID"] == "12")
    }

    @Test func callMetadataOverridesHandlerMetadataAndProviderMetadataIsIncluded() async throws {
        let journal = try DatagramSocket()
        var logger = Logger(label: "test") { _ in
            JournaldLogHandler(
                identifier: "wearfleetd",
                metadataProvider: Logger.MetadataProvider { ["adapter": "hci1"] },
                transport: JournalDatagramTransport(socketPath: journal.path)
            )
        }
        logger[metadataKey: "device.state"] = "connecting"
        logger.info("ready", metadata: ["device.state": "ready"])
        let fields = try #require(JournalWireFormat.decode(try await journal.receive()))
        #expect(fields.filter { $0.name == "DEVICE_STATE" }.map(\.text) == ["ready"])
        #expect(fields.contains { $0.name == "ADAPTER" && $0.text == "hci1" })
    }

    @Test func sendingWithoutAJournaldNeverFails() {
        // libsystemd returns 0 when nothing listens on /run/systemd/journal/socket, and a
        // missing journald must never turn logging into an error for the caller.
        let fields = JournalEntry.fields(level: .info, message: "x", metadata: [:], identifier: "wearfleet-test",
                                         file: #fileID, function: #function, line: #line)
        let result = SDJournalTransport().send(fields)
        #expect(result == 0 || result == -EAGAIN)
    }

    /// With a real journald (inside the systemd test container, or on a normal host), the entry
    /// sent through `sd_journal_sendv` is read back with `journalctl`, newlines and all.
    @Test(.enabled(if: RealJournal.isAvailable, "no journald: /run/systemd/journal/socket or journalctl is missing"))
    func sdJournalSendvEntriesReachARealJournald() async throws {
        let marker = "wf-test-\(UInt64.random(in: 0...UInt64.max))"
        var logger = Logger(label: "test") { _ in JournaldLogHandler(identifier: "wearfleet-test") }
        logger[metadataKey: "test.marker"] = .string(marker)
        logger.notice("journald round trip\nsecond line", metadata: ["device.address": "AA:BB:CC:DD:EE:FF"])
        let entry = try await RealJournal.entry(marker: marker)
        #expect(entry["MESSAGE"] as? String == "journald round trip\nsecond line")
        #expect(entry["PRIORITY"] as? String == "5")
        #expect(entry["DEVICE_ADDRESS"] as? String == "AA:BB:CC:DD:EE:FF")
        #expect(entry["SYSLOG_IDENTIFIER"] as? String == "wearfleet-test")
        // A single string, not an array: libsystemd added no CODE_* of its own
        // (SD_JOURNAL_SUPPRESS_LOCATION), so the caller's location is the only one.
        #expect((entry["CODE_FILE"] as? String)?.hasSuffix("JournaldLogHandlerTests.swift") == true)
        #expect(entry["CODE_FUNC"] as? String == "sdJournalSendvEntriesReachARealJournald()")
    }

    /// An entry larger than a datagram still arrives whole: libsystemd passes it in a memfd.
    @Test(.enabled(if: RealJournal.isAvailable, "no journald: /run/systemd/journal/socket or journalctl is missing"))
    func entriesLargerThanADatagramReachARealJournald() async throws {
        let marker = "wf-test-\(UInt64.random(in: 0...UInt64.max))"
        var logger = Logger(label: "test") { _ in JournaldLogHandler(identifier: "wearfleet-test") }
        logger[metadataKey: "test.marker"] = .string(marker)
        let big = String(repeating: "0123456789abcdef", count: 48 * 1024)  // 768 KiB
        logger.info("\(big)")
        let entry = try await RealJournal.entry(marker: marker)
        #expect((entry["MESSAGE"] as? String)?.count == big.count)
    }
}
