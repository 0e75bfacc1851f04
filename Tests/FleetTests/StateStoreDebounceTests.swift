import FleetCore
import Foundation
import Testing
import TestSupport
@testable import Fleet
@testable import FleetState

/// Saves are debounced: the tests fire the debounce timer by hand and count saves through the
/// writer, so nothing depends on wall-clock timing.
@Suite struct StateStoreDebounceTests {
    @Test func manyUpdatesBecomeOneSave() async throws {
        let directory = try TemporaryDirectory()
        let writer = CountingWriter()
        let timer = ManualTimer()
        let store = StateStoreFixture.store(in: directory, writer: writer, timer: timer)
        _ = try await store.load()

        for index in 0..<1000 { await store.update(StateStoreFixture.device(index)) }
        try await withTimeout(.seconds(5), "the debounce timer to be armed") { await timer.waitUntilArmed() }
        #expect(writer.writes == 0)
        #expect(await timer.requestedDelays == [.milliseconds(500)])

        await timer.fire()
        await store.waitForScheduledSave()
        #expect(writer.writes == 1)
        #expect(await !store.hasUnsavedChanges)
        let onDisk = try StateFile.decode(Data(contentsOf: store.file))
        #expect(onDisk.count == 1000)
    }

    @Test func changesAfterASaveScheduleTheNextOne() async throws {
        let directory = try TemporaryDirectory()
        let writer = CountingWriter()
        let timer = ManualTimer()
        let store = StateStoreFixture.store(in: directory, writer: writer, timer: timer)
        _ = try await store.load()

        for round in 1...3 {
            await store.update(StateStoreFixture.device(round))
            await store.update(StateStoreFixture.device(round + 100))
            try await withTimeout(.seconds(5), "the debounce timer to be armed") { await timer.waitUntilArmed() }
            await timer.fire()
            await store.waitForScheduledSave()
            #expect(writer.writes == round)
        }
    }

    @Test func flushSavesAtOnceAndTheSupersededTimerDoesNothing() async throws {
        let directory = try TemporaryDirectory()
        let writer = CountingWriter()
        let timer = ManualTimer()
        let store = StateStoreFixture.store(in: directory, writer: writer, timer: timer)
        _ = try await store.load()

        await store.update(StateStoreFixture.device(1))
        try await withTimeout(.seconds(5), "the debounce timer to be armed") { await timer.waitUntilArmed() }
        try await store.flush()
        #expect(writer.writes == 1)
        try await store.flush()
        #expect(writer.writes == 1, "a flush with nothing pending writes nothing")

        // The superseded timer wakes late: it must neither write nor disturb the next schedule.
        await timer.fire()
        await store.waitForScheduledSave()
        #expect(writer.writes == 1)
        await store.update(StateStoreFixture.device(2))
        try await withTimeout(.seconds(5), "the next debounce timer") { await timer.waitUntilArmed() }
        await timer.fire()
        await store.waitForScheduledSave()
        #expect(writer.writes == 2)
    }

    @Test func aFailedDebouncedSaveIsRetried() async throws {
        let directory = try TemporaryDirectory()
        let timer = ManualTimer()
        let store = StateStore(directory: directory.url, debounce: .milliseconds(500), retryDelay: .seconds(7),
                               logger: StateStoreFixture.logger, writer: FailingWriter(), sleep: timer.sleep)
        _ = try await store.load()
        await store.update(StateStoreFixture.device(1))
        try await withTimeout(.seconds(5), "the debounce timer") { await timer.waitUntilArmed() }
        await timer.fire()
        try await withTimeout(.seconds(5), "the retry timer") {
            while await timer.requestedDelays.count < 2 { await timer.waitUntilArmed(); await Task.yield() }
        }
        #expect(await timer.requestedDelays == [.milliseconds(500), .seconds(7)])
        #expect(await store.hasUnsavedChanges)
        await timer.fire()
    }
}
