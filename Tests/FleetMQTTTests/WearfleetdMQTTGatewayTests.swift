import DBus
import FleetControl
import Foundation
import Testing
import TestSupport

/// Gateway-scope requests end to end: wearfleetd on a private broker, requests published with
/// mosquitto_pub on `…/gateway/gw1/request/<op>`, answers read on `…/response/<op>`, and the
/// fleet's status read back over the daemon's control interface.
@Suite("wearfleetd's gateway requests on MQTT", .serialized)
struct WearfleetdMQTTGatewayTests {
    static let spare = "C0:FF:EE:00:00:09"

    @Test func aGatewayPinIsAnsweredWithItsTransactionAndTheStatusShowsItPinned() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/gateway/gw1/#"])
        let daemon = try await MQTTDaemon(broker: broker, allowCommands: ["pin"])
        #expect(try await subscriber.first(on: "wearfleet/gateway/gw1/status").payload == "online")
        let request = "wearfleet/gateway/gw1/request"
        let response = "wearfleet/gateway/gw1/response"

        // A pin of a random-address device the fleet has not met, by address and address type.
        try publish(
            port: broker.port, topic: "\(request)/pin",
            #"{"transaction":"t1","address":"\#(Self.spare)","address_type":"random","class":"watch","name":"Spare"}"#)
        let pinned = try jsonObject(try await subscriber.first(on: "\(response)/pin", within: .seconds(20)) { $0.payload.contains(#""t1""#) }.payload)
        #expect(pinned["transaction"] as? String == "t1" && pinned["status"] as? String == "ok", "\(pinned)")
        #expect((pinned["data"] as? [String: Any])?.isEmpty == true)

        // The status shows it pinned, with the address type asked for.
        try await daemon.line(containing: "control interface ready")
        let connection = try await DBusConnection.connect(to: .address(daemon.bus.address), threadName: "gateway-test")
        let reply = try await connection.call(
            destination: WearfleetControl.busName, path: WearfleetControl.objectPath, interface: WearfleetControl.interfaceName,
            member: "GetDevice", [.string(Self.spare)], timeout: .seconds(10))
        let device = try reply.decode([String: DBusValue].self, at: 0)
        #expect(device["Pinned"]?.unwrappingVariant == .boolean(true))
        #expect(device["AddressType"]?.unwrappingVariant == .string("random"))
        #expect(device["Name"]?.unwrappingVariant == .string("Spare") && device["Class"]?.unwrappingVariant == .string("watch"))
        await connection.close()

        // Again, without a transaction: refused by the fleet, the answer has none either.
        try publish(port: broker.port, topic: "\(request)/pin", #"{"address":"\#(Self.spare)","address_type":"random"}"#)
        let again = try jsonObject(try await subscriber.first(on: "\(response)/pin") { !$0.payload.contains("transaction") }.payload)
        #expect(again["status"] as? String == "error" && (again["error"] as? String)?.contains("already") == true, "\(again)")

        // A numeric transaction is echoed as a number; unpin is not in allow_commands.
        try publish(port: broker.port, topic: "\(request)/unpin", #"{"transaction":42,"address":"\#(Self.spare)"}"#)
        let refused = try jsonObject(try await subscriber.first(on: "\(response)/unpin").payload)
        #expect(refused["transaction"] as? Int == 42 && refused["status"] as? String == "error")
        #expect(refused["error"] as? String == "unpin is not allowed (allow_commands in [mqtt])")

        // An unknown op, and a bad argument: named, nothing changes.
        try publish(port: broker.port, topic: "\(request)/explode", #"{"transaction":"u"}"#)
        let unknown = try jsonObject(try await subscriber.first(on: "\(response)/explode").payload)
        #expect(unknown["transaction"] as? String == "u" && unknown["error"] as? String == "unknown op \"explode\" (known: pin, unpin, nearby)")
        try publish(port: broker.port, topic: "\(request)/pin", #"{"transaction":"b","address":"nope"}"#)
        let bad = try jsonObject(try await subscriber.first(on: "\(response)/pin") { $0.payload.contains(#""b""#) }.payload)
        #expect(bad["status"] as? String == "error"
            && bad["error"] as? String == "'address' must be a Bluetooth address (AA:BB:CC:DD:EE:FF), found \"nope\"")
        try publish(port: broker.port, topic: "\(request)/pin", #"{"transaction":"m"}"#)
        let missing = try jsonObject(try await subscriber.first(on: "\(response)/pin") { $0.payload.contains(#""m""#) }.payload)
        #expect(missing["error"] as? String == "pin needs 'address'")

        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }
}
