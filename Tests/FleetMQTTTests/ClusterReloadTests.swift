import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// `[cluster]` turned on and off by a reload (SIGHUP) on a running gateway with its devices
/// linked: the links stay, the gateway claims what it holds (the holder of a real link wins)
/// and publishes the claims; off again, it connects on its own.
@Suite("[cluster] on and off by a reload", .serialized)
struct ClusterReloadTests {
    @Test func turningTheClusterOnKeepsTheLinksAndClaimsThemAndOffAgainChangesNothing() async throws {
        let broker = try PrivateBroker()
        let owners = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/device/+/owner"])
        let daemon = try await MQTTDaemon(broker: broker)
        for address in [MQTTDaemon.watch, MQTTDaemon.band] {
            try await daemon.line(containing: "discovering → ready adapter=hci0 device_address=\(address)", within: .seconds(60))
        }
        await daemon.simulator.resetCounters()
        let original = try String(contentsOfFile: daemon.configPath, encoding: .utf8)

        // On: the gate goes on with the links in hand; the gateway, alone, claims each device it
        // holds once its resync grace (lease + renewal, 4 s here) has run.
        try (original + "\n[cluster]\nenabled = true\nlease = \"3s\"\nrenewal = \"1s\"\nsettle = \"500ms\"\n")
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try await daemon.line(containing: "cluster: sharing the fleet")
        for segment in [MQTTDaemon.watchSegment, MQTTDaemon.bandSegment] {
            _ = try await owners.first(on: "wearfleet/device/\(segment)/owner", within: .seconds(60)) {
                $0.payload.contains(#""gw":"gw1""#) && $0.payload.contains(#""linked":true"#)
            }
        }
        var counters = await daemon.simulator.counterSnapshot()
        #expect(counters.connectAttempts[MQTTDaemon.watch, default: 0] == 0, "the watch kept its link: \(counters.connectAttempts)")
        #expect(counters.connectAttempts[MQTTDaemon.band, default: 0] == 0, "the band kept its link")

        // Off: the gate goes off; the links still stay, and nothing reconnects.
        try original.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try await daemon.line(containing: "cluster: off")
        counters = await daemon.simulator.counterSnapshot()
        #expect(counters.connectAttempts[MQTTDaemon.watch, default: 0] == 0)
        #expect(counters.connectAttempts[MQTTDaemon.band, default: 0] == 0)
        #expect(await daemon.stop() == 0)
    }
}
