import FleetConfiguration
import FleetControl
import FleetCore
@testable import FleetMQTT
import Foundation
import PropertyBased
import Testing

@Suite struct MQTTCommandRequestTests {
    /// The device of the topic the requests come on.
    static let device = BluetoothAddress("C0:FF:EE:00:00:01")!

    /// A device-scope request, read and checked against the catalogue.
    private func parse(_ text: String) throws(MQTTCommandRequest.Rejection) -> CheckedCommand {
        try MQTTCommandRequest.parse(Array(text.utf8)).checked(scope: .device, device: Self.device)
    }

    private func rejection(_ text: String) -> MQTTCommandRequest.Rejection? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    /// The command with the topic's address and `given`, as MQTT checked it.
    private func command(_ name: CommandName, _ given: [String: CommandValue]) -> CheckedCommand {
        CheckedCommand(name, given: given.merging(["address": .address(Self.device)]) { $1 }, frontEnd: .mqtt)
    }

    @Test func everyOpWithItsArguments() throws {
        #expect(try MQTTCommandRequest.parse(Array(#"{"id":"a","op":"write","characteristic":"2A39","hex":"01FF"}"#.utf8)).id == .string("a"))
        let write = try parse(#"{"id":"a","op":"write","characteristic":"2A39","hex":"01FF","mode":"command","qos":"control"}"#)
        #expect(write == command(.write, ["uuid": .uuid("2A39"), "value": .bytes([1, 255]), "mode": .word("command"), "qos": .word("control")]))
        #expect(write.bool("replace") == false)
        let plain = try parse(#"{"id":1,"op":"write","characteristic":"2a39","hex":"00"}"#)
        #expect(plain == command(.write, ["uuid": .uuid("2a39"), "value": .bytes([0])]))
        // MQTT's mode is `auto` unless given; the class's QoS unless given.
        #expect(plain.word("mode") == "auto" && plain.word("qos") == nil && plain.bool("replace") == false)
        #expect(try parse(#"{"id":1,"op":"write","characteristic":"2a39","hex":"07","replace":true}"#)
            == command(.write, ["uuid": .uuid("2a39"), "value": .bytes([7]), "replace": .bool(true)]))
        #expect(try MQTTCommandRequest.parse(Array(#"{"id":2,"op":"read","characteristic":"2a19"}"#.utf8)).id == .number("2"))
        #expect(try parse(#"{"id":2,"op":"read","characteristic":"2a19"}"#) == command(.read, ["uuid": .uuid("2a19")]))
        #expect(try parse(#"{"id":"d","op":"disconnect"}"#) == command(.disconnect, [:]))
        #expect(try parse(#"{"id":"r","op":"reconnect"}"#) == command(.reconnect, [:]))
        #expect(try parse(#"{"id":"u","op":"unpin"}"#) == command(.unpin, [:]))
        #expect(try parse(#"{"id":"s","op":"subscribe","characteristic":"2a37"}"#) == command(.subscribe, ["uuid": .uuid("2a37")]))
        #expect(try parse(#"{"id":"s","op":"unsubscribe","characteristic":"2a37"}"#) == command(.unsubscribe, ["uuid": .uuid("2a37")]))
        #expect(try parse(#"{"id":"p","op":"pin","class":"strap","priority":5,"name":"Bed 3"}"#)
            == command(.pin, ["class": .string("strap"), "priority": .integer(5), "name": .string("Bed 3")]))
        let random = try parse(#"{"id":"p","op":"pin","address_type":"random"}"#)
        #expect(random == command(.pin, ["address_type": .addressType(.random)]))
        #expect(random.integer("priority") == 0 && random.string("class") == nil)
    }

    @Test(arguments: [
        ("not json", nil, "not a JSON object"),
        ("[1,2]", nil, "not a JSON object"),
        (#"{"op":"read"}"#, nil, "'id' is missing"),
        (#"{"id":true,"op":"read"}"#, nil, "'id' must be a string or a number"),
        (#"{"id":"x"}"#, "x", "'op' must be a string"),
        (#"{"id":"x","op":"format"}"#, "x", "unknown op \"format\" (known: write, read, disconnect, reconnect, pin, unpin, subscribe, unsubscribe, pair, unpair)"),
        (#"{"id":"x","op":"read"}"#, "x", "read needs 'characteristic'"),
        (#"{"id":"x","op":"read","characteristic":"heart"}"#, "x", "'characteristic' must be a Bluetooth UUID (2a37, or the 32- or 128-bit form), found \"heart\""),
        (#"{"id":"x","op":"read","characteristic":"2a19","hex":"00"}"#, "x", "read takes no argument 'hex'"),
        (#"{"id":"x","op":"disconnect","force":true}"#, "x", "disconnect takes no argument 'force'"),
        (#"{"id":"x","op":"write","characteristic":"2a39"}"#, "x", "write needs 'hex'"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"abc"}"#, "x", "'hex' must be an even number of hex digits"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"zz"}"#, "x", "'hex' must be an even number of hex digits"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":""}"#, "x", "'hex' must be 1 to 512 bytes long"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","mode":"fast"}"#, "x", "'mode' must be request, command or auto, found \"fast\""),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","qos":"urgent"}"#, "x", "'qos' must be control, normal or bulk, found \"urgent\""),
        (#"{"id":"x","op":"write","characteristic":2,"hex":"00"}"#, "x", "'characteristic' must be a string"),
        (#"{"id":"x","op":"pin","priority":"high"}"#, "x", "'priority' must be an integer"),
        (#"{"id":"x","op":"pin","priority":5000000}"#, "x", "'priority' must be an integer from 0 to 1000"),
        (#"{"id":"x","op":"pin","priority":-1}"#, "x", "'priority' must be an integer from 0 to 1000"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","replace":"yes"}"#, "x", "'replace' must be true or false"),
        (#"{"id":"x","op":"subscribe"}"#, "x", "subscribe needs 'characteristic'"),
        (#"{"id":"x","op":"unsubscribe","characteristic":"beat"}"#, "x", "'characteristic' must be a Bluetooth UUID (2a37, or the 32- or 128-bit form), found \"beat\""),
        (#"{"id":"x","op":"pin","address_type":"static"}"#, "x", "'address_type' must be public or random, found \"static\""),
        (#"{"id":"x","op":"pin","name":"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"}"#, "x", "'name' must be at most 248 bytes long"),
    ] as [(String, String?, String)])
    func refusals(_ text: String, _ id: String?, _ message: String) {
        let refused = rejection(text)
        #expect(refused?.message == message)
        #expect(refused?.id == id.map { .string($0) })
    }

    @Test func gatewayRequestsTakeTheAddressAsAnArgumentAndEchoTheirTransaction() throws {
        let request = try MQTTCommandRequest.parseGateway(Array(#"{"transaction":7,"address":"C4:7A:10:00:00:09","address_type":"random"}"#.utf8), op: "pin")
        #expect(request.id == .number("7"))
        let command = try request.checked(scope: .gateway)
        #expect(command.name == .pin && command.address?.description == "C4:7A:10:00:00:09" && command.addressType("address_type") == .random)
        #expect(try MQTTCommandRequest.parseGateway([], op: "unpin").id == nil)
        // A caller's number comes back as it sent it, whatever its size (not a Double's rounding).
        for digits in ["18446744073709551615", "-9223372036854775808", "123456789012345678901234567890", "0"] {
            #expect(try MQTTCommandRequest.parseGateway(Array(#"{"transaction":\#(digits)}"#.utf8), op: "nearby").id == .number(digits))
        }
        #expect(try MQTTCommandRequest.parseGateway(Array(#"{"transaction":2.5}"#.utf8), op: "nearby").id == .number("2.5"))
        func message(_ text: String, _ op: String) -> String? {
            do {
                _ = try MQTTCommandRequest.parseGateway(Array(text.utf8), op: op).checked(scope: .gateway)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message(#"{"transaction":true}"#, "pin") == "'transaction' must be a string or a number")
        #expect(message(#"{}"#, "unpin") == "unpin needs 'address'")
        #expect(message(#"{"address":"C4:7A:10:00:00:09"}"#, "read") == "unknown op \"read\" (known: pin, unpin, nearby)")
        #expect(String(decoding: MQTTGatewayResponse.ok(.string("t")), as: UTF8.self) == #"{"transaction":"t","status":"ok","data":{}}"#)
        #expect(String(decoding: MQTTGatewayResponse.error(nil, "no"), as: UTF8.self) == #"{"status":"error","error":"no"}"#)
        // At device scope the address is the topic's: the request cannot name another.
        #expect(throws: MQTTCommandRequest.Rejection.self) {
            try MQTTCommandRequest.parse(Array(#"{"id":1,"op":"unpin","address":"C4:7A:10:00:00:09"}"#.utf8))
                .checked(scope: .device, device: Self.device)
        }
    }

    @Test func aNumericIdIsEchoedAsANumber() throws {
        let request = try MQTTCommandRequest.parse(Array(#"{"id":42,"op":"reconnect"}"#.utf8))
        let result = String(decoding: MQTTCommandResult.success(request.id, op: "reconnect"), as: UTF8.self)
        #expect(result == #"{"id":42,"op":"reconnect","ok":true}"#)
        let failure = String(decoding: MQTTCommandResult.failure(nil, op: nil, error: "not a JSON object"), as: UTF8.self)
        #expect(failure == #"{"ok":false,"error":"not a JSON object"}"#)
    }

    /// Whatever arrives, parsing answers (a request or a rejection) and never traps.
    @Test func arbitraryBytesNeverTrap() async {
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...200)) { bytes in
            _ = try? MQTTCommandRequest.parse(bytes).checked(scope: .device, device: Self.device)
            _ = try? MQTTCommandRequest.parseGateway(bytes, op: "pin").checked(scope: .gateway)
        }
    }

    @Test func hexRoundTrips() async {
        await propertyCheck(input: Gen.uint8().array(of: 1...64)) { bytes in
            let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            #expect(MQTTCommandRequest.bytes(hex: hex) == bytes)
            #expect(MQTTCommandRequest.bytes(hex: hex.uppercased()) == bytes)
        }
    }
}

@Suite struct MQTTTopicsTests {
    let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "gw1", discoveryPrefix: "homeassistant")
    let watch = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!)

    @Test func theDocumentedTopics() {
        #expect(topics.gatewayStatus == "wearfleet/gateway/gw1/status")
        #expect(topics.state(watch) == "wearfleet/device/C0FFEE000001/state")
        #expect(topics.value(watch, kind: "heart_rate", characteristic: "00002a37-0000-1000-8000-00805f9b34fb") == "wearfleet/device/C0FFEE000001/heart_rate")
        #expect(topics.value(watch, kind: "raw", characteristic: "0000fff1-0000-1000-8000-00805f9b34fb")
            == "wearfleet/device/C0FFEE000001/raw/0000fff1-0000-1000-8000-00805f9b34fb")
        #expect(topics.commandFilter == "wearfleet/device/+/command")
        #expect(topics.commandResult("C0FFEE000001") == "wearfleet/device/C0FFEE000001/command/result")
        #expect(topics.homeAssistantStatus == "homeassistant/status")
    }

    @Test func gatewayRequestTopicsNameAnOpOrNothing() {
        #expect(topics.gatewayRequestFilter == "wearfleet/gateway/gw1/request/+")
        #expect(topics.gatewayResponse("pin") == "wearfleet/gateway/gw1/response/pin")
        #expect(topics.gatewayRequestOp(in: "wearfleet/gateway/gw1/request/pin") == "pin")
        #expect(topics.gatewayRequestOp(in: "wearfleet/gateway/gw1/request/") == nil)
        #expect(topics.gatewayRequestOp(in: "wearfleet/gateway/gw2/request/pin") == nil)
        #expect(topics.gatewayRequestOp(in: "wearfleet/gateway/gw1/response/pin") == nil)
    }

    @Test func commandTopicsNameADeviceOrNothing() {
        #expect(topics.commandDevice(in: "wearfleet/device/C0FFEE000001/command") == "C0FFEE000001")
        #expect(topics.commandDevice(in: "wearfleet/device/C0FFEE000001/command/result") == nil)
        #expect(topics.commandDevice(in: "wearfleet/device/XYZ/command") == nil)
        #expect(topics.commandDevice(in: "other/device/C0FFEE000001/command") == nil)
    }
}
