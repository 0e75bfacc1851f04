import FleetCore
import Foundation
import Testing
@testable import Fleet
@testable import FleetState

/// Crashes mid-save and bad files: what the daemon learned must survive both.
@Suite struct StateStoreRecoveryTests {
    private func stateFile(_ directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("known-devices.json")
    }

    @Test func aCrashBeforeTheRenameLeavesTheOldFileAndTheNextSaveCleansUp() async throws {
        let directory = try TemporaryDirectory()
        let original = StateStoreFixture.store(in: directory)
        _ = try await original.load()
        await original.update(StateStoreFixture.device(1))
        try await original.flush()
        let saved = try Data(contentsOf: stateFile(directory))

        // The "crash": the temporary file is complete and durable, the rename never happens.
        let crashing = StateStoreFixture.store(in: directory, writer: CrashBeforeRename())
        _ = try await crashing.load()
        await crashing.update(StateStoreFixture.device(2))
        await #expect(throws: (any Error).self) { try await crashing.flush() }
        // AtomicFileWriter removes its temporary on failure; a real crash would not, so put one back.
        try Data("{\"formatVersion\": 1, \"devices\": [".utf8).write(to: AtomicFileWriter.temporaryFile(for: stateFile(directory)))
        #expect(try directory.contents() == ["known-devices.json", "known-devices.json.tmp"])
        #expect(try Data(contentsOf: stateFile(directory)) == saved)

        let restarted = StateStoreFixture.store(in: directory)
        let loaded = try await restarted.load()
        #expect(loaded.problem == nil)
        #expect(loaded.devices == [StateStoreFixture.device(1)])
        #expect(try directory.contents() == ["known-devices.json"])

        // A stray temporary that appears later (e.g. from a crash of a second instance) is
        // replaced by the next save rather than left behind.
        try Data("partial".utf8).write(to: AtomicFileWriter.temporaryFile(for: stateFile(directory)))
        await restarted.update(StateStoreFixture.device(3))
        try await restarted.flush()
        #expect(try directory.contents() == ["known-devices.json"])
        #expect(try StateFile.decode(Data(contentsOf: stateFile(directory))).count == 2)
    }

    @Test func theWriterReallyStopsBeforeTheRename() throws {
        let directory = try TemporaryDirectory()
        try Data("old".utf8).write(to: stateFile(directory))
        let writer = AtomicFileWriter(beforeRename: { () throws(StateStoreError) in
            // At this point the new content is durable under the temporary name only.
            let temporary = try? Data(contentsOf: AtomicFileWriter.temporaryFile(for: stateFile(directory)))
            #expect(temporary == Data("new".utf8))
            throw .writeFailed(path: "simulated", step: "crash", errno: EIO)
        })
        #expect(throws: StateStoreError.self) { try writer.write(Data("new".utf8), to: stateFile(directory)) }
        #expect(try Data(contentsOf: stateFile(directory)) == Data("old".utf8))
    }

    @Test func aCorruptFileIsSetAsideWithItsContentAndTheStoreStartsEmpty() async throws {
        let directory = try TemporaryDirectory()
        let garbage = Data("{\"formatVersion\": 1, \"devices\": [{\"address\": \"AA:BB\"".utf8)
        try garbage.write(to: stateFile(directory))

        let store = StateStoreFixture.store(in: directory)
        let loaded = try await store.load()
        #expect(loaded.devices.isEmpty)
        let problem = try #require(loaded.problem)
        guard case .corrupt = problem else { Issue.record("expected corrupt, got \(problem)"); return }
        #expect(problem.setAsideAt.lastPathComponent == "known-devices.json.corrupt-20261122T195801Z")
        #expect(try Data(contentsOf: problem.setAsideAt) == garbage)
        #expect(try directory.contents() == ["known-devices.json.corrupt-20261122T195801Z"])

        // The daemon runs on; a second bad file in the same second gets its own name.
        await store.update(StateStoreFixture.device(1))
        try await store.flush()
        try Data("also bad".utf8).write(to: stateFile(directory))
        let again = try await StateStoreFixture.store(in: directory).load()
        #expect(again.problem?.setAsideAt.lastPathComponent == "known-devices.json.corrupt-20261122T195801Z-2")
        #expect(try Data(contentsOf: problem.setAsideAt) == garbage)
    }

    @Test func aFileFromANewerDaemonIsSetAsideNotOverwritten() async throws {
        let directory = try TemporaryDirectory()
        let newer = Data(#"{"formatVersion": 7, "devices": [{"whatever": 1}]}"#.utf8)
        try newer.write(to: stateFile(directory))
        let loaded = try await StateStoreFixture.store(in: directory).load()
        #expect(loaded.problem == .unsupportedVersion(7, setAsideAt: directory.url.appendingPathComponent(
            "known-devices.json.corrupt-20261122T195801Z")))
        #expect(try Data(contentsOf: try #require(loaded.problem).setAsideAt) == newer)
    }

    @Test func anUnreadableFileIsSetAside() async throws {
        // A directory where the file should be: open succeeds, read fails with EISDIR.
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: stateFile(directory), withIntermediateDirectories: false)
        let loaded = try await StateStoreFixture.store(in: directory).load()
        guard case .unreadable(let reason, let aside) = try #require(loaded.problem) else {
            Issue.record("expected unreadable, got \(String(describing: loaded.problem))")
            return
        }
        #expect(reason == "Is a directory")
        #expect(aside.lastPathComponent.hasPrefix("known-devices.json.corrupt-"))
        #expect(loaded.devices.isEmpty)
    }
}

/// Writes and syncs the temporary file, then "crashes" before renaming it.
private struct CrashBeforeRename: StateFileWriting {
    func write(_ data: Data, to file: URL) throws(StateStoreError) {
        try AtomicFileWriter(beforeRename: { () throws(StateStoreError) in
            throw .writeFailed(path: file.path, step: "simulated crash before rename", errno: EIO)
        }).write(data, to: file)
    }
}
