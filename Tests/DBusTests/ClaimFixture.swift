import DBus
import Synchronization
import TestSupport

/// A sender and a receiver on a private bus, the receiver subscribed to everything sent on
/// `path` (or below a namespace) with a claim under test; records what the claim took and what
/// arrived decoded, in the order the subscription saw them. `finish()` sends a marker signal
/// (never claimed) and waits for it: the bus keeps one sender's order, so everything sent before
/// it was seen.
final class ClaimFixture: Sendable {
    /// What the subscription saw: a signal its claim took (with what the claim read), or one
    /// that arrived decoded.
    enum Entry: Equatable, Sendable {
        case claimed(String)
        case decoded(member: String, body: [DBusValue])
    }

    static let path: DBusObjectPath = "/com/example/sensor"
    static let interface = "com.example.Sensor1"
    static let properties = "org.freedesktop.DBus.Properties"

    let bus: BusFixture
    let sender: DBusConnection
    let receiver: DBusConnection
    private let log = EntryLog()
    private let markers: AsyncStream<Void>
    private let markerSink: AsyncStream<Void>.Continuation

    /// `claim` returns what it read (recorded as `.claimed`) to take the signal, nil to leave it.
    /// With `namespace`, the subscription takes every path below it rather than `path` alone.
    init(
        under namespace: DBusObjectPath? = nil, claim: @escaping @Sendable (borrowing DBusMessageReader) -> String?
    ) async throws {
        bus = try BusFixture()
        sender = try await bus.connect("claim-sender")
        receiver = try await bus.connect("claim-receiver")
        (markers, markerSink) = AsyncStream<Void>.makeStream()
        let log = self.log
        let markerSink = self.markerSink
        _ = try await receiver.subscribe(
            matching: namespace.map { MatchRule(pathNamespace: $0) } ?? MatchRule(path: Self.path),
            claim: { message in
                guard !message.hasMember("Marker", of: Self.interface), let read = claim(message) else { return false }
                log.append(.claimed(read))
                return true
            },
            onSignals: { batch in
                for signal in batch {
                    if signal.member == "Marker" {
                        markerSink.yield()
                    } else {
                        log.append(.decoded(member: signal.member ?? "", body: signal.body))
                    }
                }
            },
            onEnd: { _ in markerSink.finish() })
    }

    /// A `PropertiesChanged` of `interface` on `path`.
    static func propertiesChanged(
        _ changed: [String: DBusValue], invalidated: [String] = [], of interface: String = ClaimFixture.interface
    ) -> DBusMessage {
        .signal(
            path: path, interface: properties, member: "PropertiesChanged",
            body: [.string(interface), .stringVariantMap(changed), .stringArray(invalidated)])
    }

    /// Sends every signal in one go from the sender's thread, so that they tend to reach the
    /// receiver in one read (one dispatch round), where ordering mistakes would show.
    func send(_ signals: [DBusMessage]) async throws {
        try await sender.sendAll(signals)
    }

    /// Sends the marker and returns what the subscription saw before it.
    func finish() async throws -> [Entry] {
        try await sender.emitSignal(path: Self.path, interface: Self.interface, member: "Marker")
        _ = try await markers.first(within: .seconds(10), "the marker signal") { true }
        return log.entries
    }

    func close() async {
        markerSink.finish()
        await sender.close()
        await receiver.close()
    }
}

/// The entries, shared by the subscription's closures and the test.
private final class EntryLog: Sendable {
    private let storage = Mutex<[ClaimFixture.Entry]>([])

    var entries: [ClaimFixture.Entry] { storage.withLock { $0 } }

    func append(_ entry: ClaimFixture.Entry) {
        storage.withLock { $0.append(entry) }
    }
}

extension DBusConnection {
    /// Sends `messages` back to back in one job on the connection's thread.
    func sendAll(_ messages: [DBusMessage]) throws {
        for message in messages { try send(message) }
    }
}

/// The claim most of these tests use: a `PropertiesChanged` of `com.example.Sensor1` whose only
/// change is `Value`, an `ay`, with nothing invalidated (how bluetoothd announces a
/// notification), read in place; the bytes, or nil for anything else.
func valueOnlyChange(_ message: borrowing DBusMessageReader) -> [UInt8]? {
    guard message.hasMember("PropertiesChanged", of: ClaimFixture.properties), message.hasSignature("sa{sv}as") else {
        return nil
    }
    let bytes = try? message.withArguments { arguments throws(DBusDecodingError) -> [UInt8]? in
        guard try arguments.readString(equalTo: ClaimFixture.interface) else { return nil }
        let value = try arguments.readArray { entries throws(DBusDecodingError) -> [UInt8]? in
            let value = try entries.readDictEntry { entry throws(DBusDecodingError) -> [UInt8]? in
                guard try entry.readString(equalTo: "Value") else { return nil }
                return try entry.readVariant { inner throws(DBusDecodingError) in
                    inner.nextIs(.array(.byte)) ? try inner.readBytes() : nil
                }
            }
            return entries.isAtEnd ? value : nil
        }
        let nothingInvalidated = try arguments.readArray { invalidated throws(DBusDecodingError) in invalidated.isAtEnd }
        return nothingInvalidated ? value : nil
    }
    return bytes ?? nil
}

/// `valueOnlyChange` as a fixture claim: records the bytes as `"[1, 2, 3]"`.
func claimValueOnlyChange(_ message: borrowing DBusMessageReader) -> String? {
    valueOnlyChange(message).map { "\($0)" }
}
