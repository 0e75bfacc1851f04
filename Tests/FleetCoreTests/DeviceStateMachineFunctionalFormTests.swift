import Testing
@testable import FleetCore

@Suite struct DeviceStateMachineFunctionalFormTests {
    @Test func theFunctionalFormLeavesItsInputUntouchedAndReturnsTheNextMachine() throws {
        let h = try DeviceHarness.idle()
        var random = SeededRandom(seed: 1)
        let (next, effects) = DeviceStateMachine.reduce(h.machine, .policyUpdated(wanted: true), now: .zero, random: &random)
        #expect(h.machine.state == .idle)
        #expect(next.state == .connecting(adapter: nil))
        #expect(effects.first == .requestAttempt)
    }
}
