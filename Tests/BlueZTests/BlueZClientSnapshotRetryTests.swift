import BlueZ
import DBus
import Synchronization
import Testing
import TestSupport

/// A bluetoothd whose `GetManagedObjects` fails its first calls, as one under load or still
/// starting does: the client must not take it for present with an empty tree.
struct FlakyObjectManager {
    let connection: DBusConnection

    /// Serves `/` as ObjectManager itself (not through the library's), answering the first
    /// `failures` calls with `org.freedesktop.DBus.Error.Failed`, then with one powered adapter.
    static func start(on bus: PrivateBus, failures: Int) async throws -> (FlakyObjectManager, @Sendable () -> Int) {
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "flaky-bluez")
        let calls = Counter()
        let adapter: [String: DBusValue] = ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true)]
        let manager = DBusInterface(
            "org.freedesktop.DBus.ObjectManager",
            methods: [
                DBusMethod(
                    "GetManagedObjects",
                    outputs: [DBusArgument("objects", .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))))],
                    handler: .sync { _ in
                    guard calls.next() > failures else {
                        throw DBusError(name: "org.freedesktop.DBus.Error.Failed", message: "not ready yet")
                    }
                    let interfaces = DBusValue.dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant),
                        [DBusDictEntry(key: .string("org.bluez.Adapter1"), value: .stringVariantMap(adapter))])
                    return [.dictionary(
                        key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                        [DBusDictEntry(key: .objectPath(FakeBluetoothd.adapterPath), value: interfaces)])]
                }),
            ])
        try await connection.export(manager, properties: [:], at: .root)
        try await connection.export(FakeBluetoothd.adapterInterface, properties: adapter, at: FakeBluetoothd.adapterPath)
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])
        return (FlakyObjectManager(connection: connection), { calls.value })
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func next() -> Int { count.withLock { $0 += 1; return $0 } }
        var value: Int { count.withLock { $0 } }
    }
}

@Suite("The BlueZ client when bluetoothd's tree cannot be read")
struct BlueZClientSnapshotRetryTests {
    static let quickBackoff = SnapshotBackoff(initial: .milliseconds(20), maximum: .milliseconds(80))

    @Test func aFailedTreeFetchIsRetriedUntilItSucceedsAndOnlyThenIsBluetoothdPresent() async throws {
        let bus = try PrivateBus()
        let (bluetoothd, calls) = try await FlakyObjectManager.start(on: bus, failures: 2)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)), snapshotBackoff: Self.quickBackoff)
        let events = client.events
        try await client.start()

        // Failures are reported and never followed by `appeared` until the tree was read.
        let appeared = try await events.first(within: .seconds(10), "bluetoothd to appear after its tree was read") { event in
            if case .snapshotFailed = event { return false }
            return true
        }
        guard case .appeared(let owner, let adapters, _) = appeared else {
            Issue.record("the first event after the failures is \(appeared), not appeared")
            return
        }
        #expect(owner == bluetoothd.connection.uniqueName)
        #expect(adapters.map(\.path) == [FakeBluetoothd.adapterPath], "the tree is the one read on the third call")
        #expect(await client.tree.adapters.count == 1)
        #expect(await client.snapshotFailures == 2)
        #expect(calls() == 3)
        await client.stop()
    }

    @Test func eachFailureIsReportedWithItsAttemptAndTheWaitBeforeTheNext() async throws {
        let bus = try PrivateBus()
        let (_, _) = try await FlakyObjectManager.start(on: bus, failures: 3)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)), snapshotBackoff: Self.quickBackoff)
        let events = client.events
        try await client.start()
        var failures: [(attempt: Int, retryIn: Duration)] = []
        for _ in 0..<3 {
            let event = try await events.first(within: .seconds(10), "a failed tree fetch") { _ in true }
            guard case .snapshotFailed(let attempt, let error, let retryIn) = event else {
                Issue.record("expected a failed fetch, got \(event)")
                return
            }
            #expect(error.contains("not ready yet"), "the error says what bluetoothd answered: \(error)")
            failures.append((attempt, retryIn))
        }
        #expect(failures.map(\.attempt) == [1, 2, 3])
        for failure in failures { #expect(failure.retryIn <= .milliseconds(80) && failure.retryIn > .zero) }
        let next = try await events.first(within: .seconds(10), "bluetoothd to appear") { _ in true }
        if case .appeared = next {} else { Issue.record("after the third failure: \(next)") }
        await client.stop()
    }

    @Test func theBackoffDoublesUpToItsMaximumWithJitterTakenOff() {
        let backoff = SnapshotBackoff(initial: .milliseconds(250), maximum: .seconds(10), jitter: 0.2)
        #expect(backoff.delay(afterFailures: 1, random: 0) == .milliseconds(250))
        #expect(backoff.delay(afterFailures: 2, random: 0) == .milliseconds(500))
        #expect(backoff.delay(afterFailures: 3, random: 0) == .seconds(1))
        #expect(backoff.delay(afterFailures: 50, random: 0) == .seconds(10))
        #expect(backoff.delay(afterFailures: 1, random: 1) == .milliseconds(200))
        for failures in 1...40 {
            let delay = backoff.delay(afterFailures: failures)
            #expect(delay > .zero && delay <= .seconds(10))
        }
    }
}
