import FleetCore
import Foundation
import Testing
@testable import Fleet
@testable import FleetState

@Suite struct StateStoreTests {
    @Test func devicesSurviveARestart() async throws {
        let directory = try TemporaryDirectory()
        let devices = (0..<4).map { StateStoreFixture.device($0) }
        let first = StateStoreFixture.store(in: directory)
        #expect(try await first.load().devices.isEmpty)
        for device in devices { await first.update(device) }
        await first.remove(devices[3].id)
        try await first.flush()

        let second = StateStoreFixture.store(in: directory)
        let loaded = try await second.load()
        #expect(loaded.problem == nil)
        #expect(loaded.devices == Array(devices[0..<3]))
        #expect(await second.knownDevices == Array(devices[0..<3]))
        #expect(try directory.contents() == ["known-devices.json"])
    }

    @Test func aMissingDirectoryIsCreated() async throws {
        let parent = try TemporaryDirectory()
        let store = StateStore(directory: parent.url.appendingPathComponent("a/b"), logger: StateStoreFixture.logger)
        #expect(try await store.load().devices.isEmpty)
        await store.update(StateStoreFixture.device(1))
        try await store.flush()
        #expect(FileManager.default.fileExists(atPath: parent.url.appendingPathComponent("a/b/known-devices.json").path))
    }

    @Test func aStateDirectoryThatIsAFileIsAClearError() async throws {
        let parent = try TemporaryDirectory()
        let notADirectory = parent.url.appendingPathComponent("state")
        try Data("x".utf8).write(to: notADirectory)
        let store = StateStore(directory: notADirectory, logger: StateStoreFixture.logger)
        await #expect(throws: StateStoreError.directoryUnusable(path: notADirectory.path, reason: "not a directory")) {
            try await store.load()
        }
        let beneath = StateStore(directory: notADirectory.appendingPathComponent("sub"), logger: StateStoreFixture.logger)
        do {
            _ = try await beneath.load()
            Issue.record("loading beneath a regular file succeeded")
        } catch {
            #expect(error.description.contains(notADirectory.appendingPathComponent("sub").path))
            #expect(error.description.contains("Not a directory"))
        }
    }

    /// Runs when the tests run as an ordinary user (root ignores directory permissions).
    @Test(.enabled(if: getuid() != 0, "root ignores directory permissions"))
    func anUnreadableDirectoryIsAClearError() async throws {
        let parent = try TemporaryDirectory()
        let locked = parent.url.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o000])
        defer { chmod(locked.path, 0o700) }
        let store = StateStore(directory: locked, logger: StateStoreFixture.logger)
        await #expect(throws: StateStoreError.directoryUnusable(path: locked.path, reason: "no read/write access: Permission denied")) {
            try await store.load()
        }
    }

    @Test func aFailedSaveKeepsChangesPendingAndTheOldFile() async throws {
        let directory = try TemporaryDirectory()
        let good = StateStoreFixture.store(in: directory)
        _ = try await good.load()
        await good.update(StateStoreFixture.device(1))
        try await good.flush()
        let before = try Data(contentsOf: directory.url.appendingPathComponent("known-devices.json"))

        let failing = StateStoreFixture.store(in: directory, writer: FailingWriter())
        _ = try await failing.load()
        await failing.update(StateStoreFixture.device(2))
        await #expect(throws: StateStoreError.writeFailed(
            path: directory.url.appendingPathComponent("known-devices.json").path, step: "write", errno: ENOSPC)) {
            try await failing.flush()
        }
        #expect(await failing.hasUnsavedChanges)
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("known-devices.json")) == before)
    }

    @Test func modifyCreatesOrChangesInOneStep() async throws {
        let directory = try TemporaryDirectory()
        let store = StateStoreFixture.store(in: directory)
        _ = try await store.load()
        let fresh = KnownDevice(id: StateStoreFixture.device(5).id)
        let now = StateStoreFixture.fixedNow
        await store.modify(fresh.id, creating: fresh) { device in
            device.apply(.init(servicesSeen: ["0000180D-0000-1000-8000-00805F9B34FB"], hasBeenReady: true, connectedNow: true),
                         adapter: AdapterID("hci0"), now: now)
        }
        await store.modify(fresh.id, creating: fresh) { $0.membership = .pinned }
        let stored = try #require(await store.device(fresh.id))
        #expect(stored.servicesSeen == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(stored.lastConnected == now && stored.adapter == AdapterID("hci0") && stored.membership == .pinned)
        #expect(await store.hasUnsavedChanges)
    }

    @Test func unchangedUpdatesDoNotScheduleSaves() async throws {
        let directory = try TemporaryDirectory()
        let writer = CountingWriter()
        let store = StateStoreFixture.store(in: directory, writer: writer)
        _ = try await store.load()
        await store.update(StateStoreFixture.device(1))
        try await store.flush()
        await store.update(StateStoreFixture.device(1))
        await store.remove(StateStoreFixture.device(9).id)
        #expect(await !store.hasUnsavedChanges)
        try await store.flush()
        #expect(writer.writes == 1)
    }
}
