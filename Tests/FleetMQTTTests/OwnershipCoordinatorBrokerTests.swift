import Fleet
import FleetCore
@testable import FleetMQTT
import Foundation
import Logging
import ProcessSupport
import Testing
import TestSupport

/// Several gateways agreeing on one device through a real mosquitto on a loopback port, each
/// with its own `MQTTClient` and `OwnershipCoordinator` (ARCHITECTURE.md, "Several gateways:
/// ownership through the broker"). Durations are printed for NOTES.md, never asserted.
@Suite(.serialized) struct OwnershipCoordinatorBrokerTests {
    static let prefix = OwnershipGateway.prefix

    /// Feeds each gateway its reading of the device before its events are read, so that every
    /// gateway's first bids message (sent at connection) already holds the device: all gateways
    /// compare the same bids when their grace ends.
    static func hearing(_ device: DeviceID, _ readings: [(OwnershipGateway, Int)]) async {
        for (gateway, rssi) in readings { await gateway.coordinator.heard(device, OwnershipBidInputs(rssi: rssi, freeSlots: 3)) }
    }

    /// Waits until every gateway names `owner` as the device's linked owner.
    static func agreed(on owner: String, for device: DeviceID, among gateways: [OwnershipGateway]) async throws {
        for gateway in gateways {
            try await gateway.waitForStatus("\(owner) as the linked owner") { status in
                status.device(device).map { $0.owner == GatewayID(owner) && $0.linked } ?? false
            }
        }
    }

    @Test func ofThreeGatewaysHearingADeviceOnlyTheBestAcquiresItAndTheClaimIsRetained() async throws {
        let broker = try PrivateBroker()
        let device = try OwnershipGateway.device("C0:FF:EE:00:00:01")
        let gw1 = try OwnershipGateway("gw1", brokerPort: broker.port)
        let gw2 = try OwnershipGateway("gw2", brokerPort: broker.port)
        let gw3 = try OwnershipGateway("gw3", brokerPort: broker.port)
        await Self.hearing(device, [(gw1, -70), (gw2, -50), (gw3, -80)])
        // gw1 is fed as in the daemon: the bridge reads the client's events and routes to it.
        gw1.start(bridgeFleet: MQTTCommandLaneTests.GatedFleet(slowDevice: device))
        gw2.start()
        gw3.start()

        try await gw2.waitFor(.acquire(device))
        try await Self.agreed(on: "gw2", for: device, among: [gw1, gw2, gw3])
        #expect(gw1.decisions.isEmpty)
        #expect(gw3.decisions.isEmpty)
        #expect(gw2.decisions == [.acquire(device)])
        let owned = try await gw2.waitForStatus("the device owned here") { $0.device(device)?.ownedHere ?? false }
        #expect(owned.device(device)?.wantedHere == true)

        // The broker keeps the claim and every gateway's bids for a gateway that comes later.
        let late = try await BrokerSubscriber(
            port: broker.port, topics: ["\(Self.prefix)/device/+/owner", "\(Self.prefix)/gateway/+/bids"])
        let retained = try await late.first(on: gw2.topics.owner(device), within: .seconds(30))
        #expect(retained.retained)
        let claim = try JSONDecoder().decode(OwnerClaim.self, from: Data(retained.payload.utf8))
        #expect(claim.device == device && claim.gateway == GatewayID("gw2") && claim.linked)
        for gateway in [gw1, gw2, gw3] {
            let bids = try await late.first(on: gateway.topics.bids, within: .seconds(30))
            #expect(bids.retained)
            let decoded = try JSONDecoder().decode(OwnershipBids.self, from: Data(bids.payload.utf8))
            #expect(decoded.gateway == GatewayID(gateway.name) && decoded.bids[device] != nil)
        }

        let figures = await [gw1, gw2, gw3].asyncMap { await $0.coordinator.status().counters }
        print("ownership figures (three gateways, one device):", figures)
        for gateway in [gw1, gw2, gw3] { await gateway.stop() }
        // Later messages (the stops' `offline`) hand nothing over to the others: they stopped too.
        #expect(gw1.decisions.isEmpty && gw3.decisions.isEmpty)
        withExtendedLifetime(broker) {}
    }

    @Test func whenTheOwnerDropsWithoutDisconnectingItsWillHandsTheDeviceToTheNextBest() async throws {
        let broker = try PrivateBroker()
        let device = try OwnershipGateway.device("C0:FF:EE:00:00:02")
        // The owner reaches the broker through a relay the test severs: to the broker, a killed process.
        let relay = try SeverableRelay(toPort: broker.port)
        let gw1 = try OwnershipGateway("gw1", brokerPort: broker.port)
        let gw2 = try OwnershipGateway("gw2", brokerPort: relay.port)
        let gw3 = try OwnershipGateway("gw3", brokerPort: broker.port)
        await Self.hearing(device, [(gw1, -70), (gw2, -50), (gw3, -80)])
        for gateway in [gw1, gw2, gw3] { gateway.start() }
        try await gw2.waitFor(.acquire(device))
        try await Self.agreed(on: "gw2", for: device, among: [gw1, gw2, gw3])
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["\(Self.prefix)/gateway/gw2/status"])

        let severed = ContinuousClock.now
        relay.sever()
        let will = try await subscriber.first(on: "\(Self.prefix)/gateway/gw2/status", within: .seconds(30)) { $0.payload == "offline" }
        let willArrived = ContinuousClock.now
        try await gw1.waitFor(.acquire(device))
        let acquired = ContinuousClock.now
        try await Self.agreed(on: "gw1", for: device, among: [gw1, gw3])
        #expect(will.retained || subscriber.all(on: "\(Self.prefix)/gateway/gw2/status").contains { $0.payload == "offline" })
        #expect(gw3.decisions.isEmpty)
        #expect(gw1.decisions == [.acquire(device)])
        // The dropped owner keeps its link while it has no broker (fail-static); its process
        // would be dead here, so nothing more is asked of it.
        let orphan = await gw2.coordinator.status()
        #expect(!orphan.brokerConnected && orphan.device(device)?.wantedHere == true)
        print(
            "ownership figures (Will): Will \(willArrived - severed) after the drop; survivor acquired \(acquired - severed) after the drop",
            await gw1.coordinator.status().counters)
        for gateway in [gw1, gw2, gw3] { await gateway.stop() }
        withExtendedLifetime((broker, relay)) {}
    }

    @Test func aMalformedOwnerPayloadIsCountedAndIgnored() async throws {
        let broker = try PrivateBroker()
        let device = try OwnershipGateway.device("C0:FF:EE:00:00:03")
        let gw1 = try OwnershipGateway("gw1", brokerPort: broker.port)
        gw1.start()
        try await gw1.waitForStatus("connected") { $0.brokerConnected }
        let tool = try MQTTClient(settings: MQTTClientBrokerTests.settings(port: broker.port), random: SeededRandom(seed: 9), logger: Logger(label: "test"))
        try await MQTTClientBrokerTests.connected(tool)
        let topic = gw1.topics.owner(device)
        func send(_ text: String, on topic: String) { tool.publish(MQTTMessage(topic: topic, text: text, qos: 1, retain: false)) }
        send("not json", on: topic)
        // Another device's claim on this device's topic.
        send(#"{"dev":"C0:FF:EE:00:00:04","gw":"gw9","ep":1,"rev":0,"linked":true}"#, on: topic)
        // An epoch whose successor does not exist.
        send(#"{"dev":"C0:FF:EE:00:00:03","gw":"gw9","ep":18446744073709551615,"rev":0,"linked":true}"#, on: topic)
        send(#"{"dev":"C0:FF:EE:00:00:03","gw":"gw9","ep":-1,"linked":true}"#, on: topic)
        send(#"{"gw":"gw8","alive":true}"#, on: "\(Self.prefix)/gateway/gw9/alive")
        send("maybe", on: "\(Self.prefix)/gateway/gw9/status")
        // A well-formed claim after them still counts: the coordinator read past the garbage.
        send(#"{"dev":"C0:FF:EE:00:00:03","gw":"gw9","ep":1,"rev":0,"linked":true}"#, on: topic)

        let status = try await gw1.waitForStatus("gw9's claim") { $0.device(device)?.owner == GatewayID("gw9") }
        #expect(status.counters.malformed == 6)
        #expect(status.device(device)?.epoch == 1)
        #expect(gw1.decisions.isEmpty)
        await tool.stop(final: nil)
        await gw1.stop()
        withExtendedLifetime(broker) {}
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var results: [T] = []
        for element in self { results.append(await transform(element)) }
        return results
    }
}
