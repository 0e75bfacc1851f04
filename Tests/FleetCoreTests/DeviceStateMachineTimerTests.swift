import Testing
@testable import FleetCore

/// Timers come back as events; only the armed generation of a kind counts.
@Suite struct DeviceStateMachineTimerTests {
    @Test func aTimeoutWithAnUnknownGenerationIsIgnored() throws {
        var h = try DeviceHarness.connecting()
        let armed = try #require(h.machine.armedTimers[.connect])
        #expect(h.feed(.timeout(.connect, generation: armed + 1)) == [])
        #expect(h.state == .connecting(adapter: DeviceHarness.hci0))
    }

    @Test func aTimeoutThatRacedItsCancellationIsIgnored() throws {
        var h = try DeviceHarness.connecting()
        let generation = try #require(h.machine.armedTimers[.connect])
        _ = h.feed(.connected)
        #expect(h.feed(.timeout(.connect, generation: generation)) == [])
        #expect(h.state == .discovering)
    }

    @Test func aTimerOfAnEarlierAttemptDoesNotEndTheNextOne() throws {
        var h = try DeviceHarness.connecting()
        let first = try #require(h.machine.armedTimers[.connect])
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        #expect(h.feed(.timeout(.connect, generation: first)) == [])
        #expect(h.state == .connecting(adapter: DeviceHarness.hci0))
    }

    @Test func aTimeoutFiresOnlyOnce() throws {
        var h = try DeviceHarness.connecting()
        let generation = try #require(h.machine.armedTimers[.connect])
        _ = h.feed(.timeout(.connect, generation: generation))
        #expect(h.feed(.timeout(.connect, generation: generation)) == [])
    }

    @Test func everyGenerationIsNew() throws {
        var h = try DeviceHarness.connecting()
        let connect = try #require(h.machine.armedTimers[.connect])
        _ = h.feed(.connected)
        let discovery = try #require(h.machine.armedTimers[.discovery])
        #expect(discovery > connect)
    }
}
