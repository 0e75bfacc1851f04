import FleetCore
import Foundation
import Logging
import Synchronization
@testable import Fleet
@testable import FleetState

/// A fresh directory under the system's temporary directory, removed when released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("wf-state-\(UInt64.random(in: 0...UInt64.max))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// Counts saves and forwards them to the real atomic writer.
final class CountingWriter: StateFileWriting {
    private let count = Mutex(0)
    private let inner: AtomicFileWriter

    init(inner: AtomicFileWriter = AtomicFileWriter()) { self.inner = inner }

    var writes: Int { count.withLock { $0 } }

    func write(_ data: Data, to file: URL) throws(StateStoreError) {
        count.withLock { $0 += 1 }
        try inner.write(data, to: file)
    }
}

/// A writer that fails every save, as a full disk would.
struct FailingWriter: StateFileWriting {
    func write(_ data: Data, to file: URL) throws(StateStoreError) {
        throw .writeFailed(path: file.path, step: "write", errno: ENOSPC)
    }
}

/// A debounce timer the test fires by hand, so no test waits on wall-clock time.
actor ManualTimer {
    private var sleepers: [CheckedContinuation<Void, Never>] = []
    private var armWatchers: [CheckedContinuation<Void, Never>] = []
    private(set) var requestedDelays: [Duration] = []

    nonisolated var sleep: @Sendable (Duration) async throws -> Void {
        { delay in await self.wait(delay) }
    }

    private func wait(_ delay: Duration) async {
        requestedDelays.append(delay)
        await withCheckedContinuation { continuation in
            sleepers.append(continuation)
            let watchers = armWatchers
            armWatchers = []
            for watcher in watchers { watcher.resume() }
        }
    }

    /// Returns once at least one sleeper waits.
    func waitUntilArmed() async {
        guard sleepers.isEmpty else { return }
        await withCheckedContinuation { armWatchers.append($0) }
    }

    var armed: Bool { !sleepers.isEmpty }

    /// Wakes every sleeper, as if its delay had passed.
    func fire() {
        let waking = sleepers
        sleepers = []
        for sleeper in waking { sleeper.resume() }
    }
}

enum StateStoreFixture {
    static let logger = Logger(label: "state-store-test") { _ in SwiftLogNoOpLogHandler() }
    /// 2026-11-22T19:58:01Z
    static let fixedNow = Date(timeIntervalSince1970: 1_795_377_481)

    static func device(_ index: Int, type: AddressType = .public) -> KnownDevice {
        let address = BluetoothAddress(bytes: [0xC0, 0xFF, 0xEE, 0, UInt8(index / 256), UInt8(index % 256)])!
        return KnownDevice(
            id: DeviceID(address: address, addressType: type),
            adapter: AdapterID("hci0"),
            name: "Strap \(index)",
            appearance: 0x0341,
            servicesSeen: ["0000180d-0000-1000-8000-00805f9b34fb", "0000180F-0000-1000-8000-00805f9b34fb"],
            lastConnected: Date(timeIntervalSince1970: 1_795_000_000 + Double(index)),
            membership: index.isMultiple(of: 2) ? .pinned : .pool
        )
    }

    static func store(
        in directory: TemporaryDirectory, writer: any StateFileWriting = AtomicFileWriter(),
        timer: ManualTimer? = nil
    ) -> StateStore {
        // Without a manual timer the debounce never fires by itself: those tests save with flush().
        var sleep: @Sendable (Duration) async throws -> Void = { _ in try await Task.sleep(for: .seconds(3600)) }
        if let timer { sleep = timer.sleep }
        return StateStore(
            directory: directory.url, debounce: .milliseconds(500), logger: logger, writer: writer,
            now: { fixedNow }, sleep: sleep
        )
    }
}
