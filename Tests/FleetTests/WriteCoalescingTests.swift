import FleetCore
import Synchronization
import Testing
import TestSupport
@testable import Fleet

/// A write channel whose `WriteValue` calls wait until the test opens the gate, recording the
/// bytes of each.
final class GatedWriteChannel: GATTWriteChannel {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var written: [[UInt8]] = []
    }
    private let state = Mutex(State())
    let calls: AsyncStream<Void>
    private let callSink: AsyncStream<Void>.Continuation

    init() { (calls, callSink) = AsyncStream.makeStream() }

    var written: [[UInt8]] { state.withLock { $0.written } }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic? {
        FleetCharacteristic(handle: "/char", flags: [.write, .writeWithoutResponse])
    }

    func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure) {
        callSink.yield()
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Bool in
                state.written.append(bytes)
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if wait { continuation.resume() }
        }
    }

    func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)? { nil }
}

/// `coalescing_window` reached from a waited-for write (D-Bus `Write` with `replace`, the
/// broker's `write` with `"replace":true`, `wearfleetctl write --replace`): a newer value takes a
/// queued one's place, and each caller hears the truth about its own value.
@Suite("Waited-for writes that replace a queued value")
struct WriteCoalescingTests {
    static let strap = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:21")!)
    static let setPoint = "00002a39-0000-1000-8000-00805f9b34fb"

    @Test func aNewerReplaceWriteTakesTheQueuedOnesPlaceAndEachCallerHearsItsOwnOutcome() async throws {
        let channel = GatedWriteChannel()
        let coordinator = WriteCoordinator(channel: channel, clock: SystemMonotonicClock(), window: 1) { _, _ in }
        await coordinator.configure(
            Self.strap, options: OutgoingDeviceOptions(coalescingWindow: .seconds(600), maxInFlightWithResponse: 1), writeTimeout: .seconds(10))
        await coordinator.linkReady(Self.strap, useSocket: false)
        func write(_ value: UInt8, replace: Bool) -> Task<Result<FleetWriteOutcome, FleetWriteError>, Never> {
            Task {
                do throws(FleetWriteError) {
                    return .success(try await coordinator.enqueueAndWait(
                        Self.strap, characteristic: Self.setPoint, bytes: [value], qos: .normal, mode: .withResponse,
                        replaceable: replace, timeout: .seconds(600)))
                } catch {
                    return .failure(error)
                }
            }
        }
        // The first write is with the device; the next two wait behind it.
        let first = write(1, replace: true)
        _ = try await channel.calls.first(within: .seconds(60), "the first write to go out") { _ in true }
        let second = write(2, replace: true)
        try await withTimeout(.seconds(60), "the second write to be queued") {
            while await coordinator.queueDepths(for: Self.strap)[.normal] != 1 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let third = write(3, replace: true)
        #expect(await second.value == .failure(.replaced(Self.strap)), "its value was never sent")
        channel.open()
        #expect(await first.value == .success(.acknowledged))
        #expect(await third.value == .success(.acknowledged))
        #expect(channel.written == [[1], [3]], "2 was replaced by 3 before it went out")
        #expect(await coordinator.counters(for: Self.strap).coalesced == 1)
    }

    /// A waited-for write handed to its lane behind a write that does not finish is taken back
    /// when its wait runs out, and its lane skips it: the caller's `timedOut` is the truth.
    @Test func aWriteWaitingInItsLaneWhenItsWaitRunsOutIsNeverSent() async throws {
        let channel = GatedWriteChannel()
        let coordinator = WriteCoordinator(channel: channel, clock: SystemMonotonicClock(), window: 2) { _, _ in }
        await coordinator.configure(Self.strap, options: OutgoingDeviceOptions(), writeTimeout: .seconds(10))
        await coordinator.linkReady(Self.strap, useSocket: false)
        let characteristic = "00002a39-0000-1000-8000-00805f9b34fb"
        func write(_ value: UInt8, waiting timeout: Duration) -> Task<Result<FleetWriteOutcome, FleetWriteError>, Never> {
            Task {
                do throws(FleetWriteError) {
                    return .success(try await coordinator.enqueueAndWait(
                        Self.strap, characteristic: characteristic, bytes: [value], qos: .normal, mode: .withoutResponse,
                        replaceable: false, timeout: timeout))
                } catch {
                    return .failure(error)
                }
            }
        }
        let first = write(1, waiting: .seconds(600))
        _ = try await channel.calls.first(within: .seconds(60), "the first write to go out") { _ in true }
        // The second is handed to the lane at once (two writes without response may be out), and
        // waits there behind the first; its 200 ms run out.
        let second = write(2, waiting: .milliseconds(200))
        #expect(await second.value == .failure(.timedOut(Self.strap, after: .milliseconds(200))))
        channel.open()
        #expect(await first.value == .success(.sent))
        // A third write goes out after the lane passed the second by.
        let third = write(3, waiting: .seconds(600))
        #expect(await third.value == .success(.sent))
        #expect(channel.written == [[1], [3]], "the second was never sent")
    }
}
