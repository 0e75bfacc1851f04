import FleetCore
import Foundation
import Logging
import Testing
import TestSupport
@testable import Fleet
@testable import FleetConfiguration
@testable import FleetState

/// `[daemon] forget_after`: known devices unseen that long leave the state file; pinned ones stay.
@Suite("Forgetting known devices")
struct ForgetAfterTests {
    static let day: TimeInterval = 86_400
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func device(_ n: Int, seenDaysAgo days: Double?, membership: KnownDevice.Membership = .pool, connectedOnly: Bool = false)
        -> KnownDevice
    {
        var device = StateStoreFixture.device(n)
        device.membership = membership
        let seen = days.map { now.addingTimeInterval(-$0 * day) }
        device.lastConnected = connectedOnly ? seen : nil
        device.lastSeen = connectedOnly ? nil : seen
        return device
    }

    static func store(in directory: TemporaryDirectory) -> StateStore {
        StateStore(directory: directory.url, logger: StateStoreFixture.logger, now: { now })
    }

    @Test func devicesUnseenLongerThanThePeriodAreForgottenExceptPinnedOnes() async throws {
        let directory = try TemporaryDirectory()
        let store = Self.store(in: directory)
        _ = try await store.load()
        let recent = Self.device(1, seenDaysAgo: 2)
        let old = Self.device(2, seenDaysAgo: 40)
        let oldConnectedOnly = Self.device(3, seenDaysAgo: 31, connectedOnly: true)
        let oldPinnedInConfig = Self.device(4, seenDaysAgo: 90)
        let oldPinnedAtRunTime = Self.device(5, seenDaysAgo: 90, membership: .pinned)
        let undated = Self.device(6, seenDaysAgo: nil)
        for device in [recent, old, oldConnectedOnly, oldPinnedInConfig, oldPinnedAtRunTime, undated] { await store.update(device) }

        let forgotten = await store.forget(seenBefore: Self.now.addingTimeInterval(-30 * Self.day), keeping: [oldPinnedInConfig.id])
        #expect(Set(forgotten.map(\.id)) == [old.id, oldConnectedOnly.id])
        #expect(Set(await store.knownDevices.map(\.id)) == [recent.id, oldPinnedInConfig.id, oldPinnedAtRunTime.id, undated.id])
        // A record from before `lastSeen` was kept, with no date at all, starts counting now.
        #expect(await store.device(undated.id)?.lastSeen == Self.now)
        try await store.flush()
        let reloaded = try await Self.store(in: directory).load().devices
        #expect(Set(reloaded.map(\.id)) == [recent.id, oldPinnedInConfig.id, oldPinnedAtRunTime.id, undated.id], "the file forgot them too")
    }

    @Test func whatTheFleetLearnsAndALinkEndingCountAsSeen() {
        var device = Self.device(1, seenDaysAgo: 40)
        device.apply(DeviceEffect.StoreUpdate(servicesSeen: ["180d"], hasBeenReady: true, connectedNow: false), adapter: nil, now: Self.now)
        #expect(device.lastSeen == Self.now)
        let decoded = try? JSONDecoder().decode(KnownDevice.self, from: JSONEncoder().encode(device))
        #expect(decoded?.lastSeen == Self.now, "lastSeen is in the state file")
    }

    @Test func theServiceLogsWhatItForgot() async throws {
        let directory = try TemporaryDirectory()
        let store = StateStore(directory: directory.url, logger: StateStoreFixture.logger)
        _ = try await store.load()
        await store.update(Self.device(2, seenDaysAgo: 1000))
        let capture = LogCapture()
        let forgotten = await StateStoreService.forget(in: store, after: .seconds(30 * 86_400), keeping: [], logger: capture.logger(label: "test"))
        #expect(forgotten.count == 1)
        let line = try #require(capture.entries.first)
        #expect(line.event == "known_devices_forgotten")
        #expect(line.message == "forgot known devices not seen for 30d")
    }

    // MARK: - Configuration

    static func decode(_ text: String) -> Result<WearfleetConfiguration, ConfigurationErrors> {
        ConfigurationLoader.decode([ConfigurationSource(file: "/etc/wearfleet/wearfleetd.toml", text: text)])
    }

    @Test func forgetAfterDefaultsToThirtyDaysAndTakesDaysOrOff() throws {
        #expect(try Self.decode("").get().daemon.forgetAfter == .seconds(30 * 86_400))
        #expect(try Self.decode("[daemon]\nforget_after = \"90d\"\n").get().daemon.forgetAfter == .seconds(90 * 86_400))
        #expect(try Self.decode("[daemon]\nforget_after = \"1d12h\"\n").get().daemon.forgetAfter == .seconds(36 * 3600))
        #expect(try Self.decode("[daemon]\nforget_after = \"0s\"\n").get().daemon.forgetAfter == nil)
    }

    @Test func aBadForgetAfterIsAFileLineError() {
        for (text, message) in [
            ("\"10m\"", "/etc/wearfleet/wearfleetd.toml:3: 'forget_after' in [daemon] must be at least 1h, found \"10m\""),
            ("\"4000d\"", "/etc/wearfleet/wearfleetd.toml:3: 'forget_after' in [daemon]: '4000d' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most 3650d)"),
            ("30", "/etc/wearfleet/wearfleetd.toml:3: 'forget_after' in [daemon] must be a duration such as \"250ms\", \"2s\" or \"5m\", found an integer"),
        ] {
            guard case .failure(let errors) = Self.decode("[daemon]\nlog_level = \"info\"\nforget_after = \(text)\n") else {
                Issue.record("forget_after = \(text) was accepted")
                continue
            }
            #expect(errors.errors.map(\.description) == [message])
        }
    }
}
