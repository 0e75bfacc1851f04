import Testing
@testable import FleetCore

/// Writes are queued and framed elsewhere; the device machine watches that they finish.
@Suite struct DeviceStateMachineWriteTests {
    @Test func theFirstOutstandingWriteArmsTheWriteTimer() throws {
        var h = try DeviceHarness.ready()
        #expect(h.feed(.writeStarted) == [h.scheduled(.write, after: .seconds(10))])
        // A second write in flight does not push the deadline of the first.
        #expect(h.feed(.writeStarted) == [])
    }

    @Test func theLastCompletedWriteDisarmsTheWriteTimer() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.writeStarted)
        #expect(h.feed(.writeCompleted) == [.cancelTimer(.write)])
    }

    @Test func aCompletedWriteWithMoreOutstandingRearmsTheTimer() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.writeStarted)
        _ = h.feed(.writeStarted)
        h.advance(by: .seconds(4))
        #expect(h.feed(.writeCompleted) == [h.scheduled(.write, after: .seconds(10))])
    }

    @Test func aWriteThatNeverCompletesDropsTheLink() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.writeStarted)
        let effects = try h.fire(.write)
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .disconnect, h.failed(.transient), h.scheduled(.backoff, at: deadline),
            h.changed(from: .ready, to: .backingOff(attempt: 1, deadline: deadline), cause: .transient),
        ])
    }

    @Test func repeatedWriteFailuresDegradeTheDevice() throws {
        var h = try DeviceHarness.ready()
        for _ in 1...2 {
            _ = h.feed(.writeStarted)
            _ = h.feed(.writeFailed(Failures.writeFailed))
        }
        _ = h.feed(.writeStarted)
        let effects = h.feed(.writeFailed(Failures.writeFailed))
        #expect(effects == [
            .cancelTimer(.write), h.scheduled(.recovery, after: .seconds(30)),
            h.changed(from: .ready, to: .degraded(.writesFailing)),
        ])
    }

    @Test func aSuccessfulWriteRestoresReady() throws {
        var h = try DeviceHarness.ready()
        for _ in 1...3 {
            _ = h.feed(.writeStarted)
            _ = h.feed(.writeFailed(Failures.writeFailed))
        }
        _ = h.feed(.writeStarted)
        let effects = h.feed(.writeCompleted)
        #expect(effects == [.cancelTimer(.write), .cancelTimer(.recovery), h.changed(from: .degraded(.writesFailing), to: .ready)])
    }

    @Test func aQuietIntervalAfterFailedWritesRestoresReady() throws {
        var h = try DeviceHarness.ready()
        for _ in 1...3 {
            _ = h.feed(.writeStarted)
            _ = h.feed(.writeFailed(Failures.writeFailed))
        }
        let effects = try h.fire(.recovery)
        #expect(effects == [h.changed(from: .degraded(.writesFailing), to: .ready)])
    }

    @Test func writeCreditResumesWritesOnAUsableLink() throws {
        var h = try DeviceHarness.ready()
        #expect(h.feed(.writeCreditAvailable) == [.resumeWrites])
    }

    @Test func writeCreditIsIgnoredWithoutAUsableLink() throws {
        var h = try DeviceHarness.discovering()
        #expect(h.feed(.writeCreditAvailable) == [])
    }

    @Test func writeEventsWithoutALinkAreIgnored() throws {
        var h = try DeviceHarness.awaitingGrant()
        #expect(h.feed(.writeStarted) == [])
        #expect(h.feed(.writeFailed(Failures.writeFailed)) == [])
    }
}
