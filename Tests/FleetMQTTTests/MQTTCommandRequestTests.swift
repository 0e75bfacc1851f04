import FleetConfiguration
import FleetCore
@testable import FleetMQTT
import Foundation
import PropertyBased
import Testing

@Suite struct MQTTCommandRequestTests {
    private func parse(_ text: String) throws(MQTTCommandRequest.Rejection) -> MQTTCommandRequest {
        try MQTTCommandRequest.parse(Array(text.utf8))
    }

    private func rejection(_ text: String) -> MQTTCommandRequest.Rejection? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyOpWithItsArguments() throws {
        #expect(try parse(#"{"id":"a","op":"write","characteristic":"2A39","hex":"01FF","mode":"command","qos":"control"}"#)
            == MQTTCommandRequest(id: .string("a"), operation: .write(characteristic: "2A39", bytes: [1, 255], mode: .withoutResponse, qos: .control)))
        #expect(try parse(#"{"id":1,"op":"write","characteristic":"2a39","hex":"00"}"#).operation
            == .write(characteristic: "2a39", bytes: [0], mode: .automatic, qos: nil))
        #expect(try parse(#"{"id":1,"op":"write","characteristic":"2a39","hex":"07","replace":true}"#).operation
            == .write(characteristic: "2a39", bytes: [7], mode: .automatic, qos: nil, replace: true))
        #expect(try parse(#"{"id":2,"op":"read","characteristic":"2a19"}"#) == MQTTCommandRequest(id: .number("2"), operation: .read(characteristic: "2a19")))
        #expect(try parse(#"{"id":"d","op":"disconnect"}"#).operation == .disconnect)
        #expect(try parse(#"{"id":"r","op":"reconnect"}"#).operation == .reconnect)
        #expect(try parse(#"{"id":"u","op":"unpin"}"#).operation == .unpin)
        #expect(try parse(#"{"id":"s","op":"subscribe","characteristic":"2a37"}"#).operation == .subscribe(characteristic: "2a37"))
        #expect(try parse(#"{"id":"s","op":"unsubscribe","characteristic":"2a37"}"#).operation == .unsubscribe(characteristic: "2a37"))
        #expect(try parse(#"{"id":"p","op":"pin","class":"strap","priority":5,"name":"Bed 3"}"#).operation
            == .pin(FleetPinOptions(className: "strap", priority: 5, name: "Bed 3"), addressType: nil))
        #expect(try parse(#"{"id":"p","op":"pin","address_type":"random"}"#).operation == .pin(FleetPinOptions(), addressType: .random))
    }

    @Test(arguments: [
        ("not json", nil, "not a JSON object"),
        ("[1,2]", nil, "not a JSON object"),
        (#"{"op":"read"}"#, nil, "'id' is missing"),
        (#"{"id":true,"op":"read"}"#, nil, "'id' must be a string or a number"),
        (#"{"id":"x"}"#, "x", "'op' must be a string"),
        (#"{"id":"x","op":"format"}"#, "x", "unknown op \"format\" (known: write, read, disconnect, reconnect, pin, unpin, subscribe, unsubscribe)"),
        (#"{"id":"x","op":"read"}"#, "x", "read needs 'characteristic'"),
        (#"{"id":"x","op":"read","characteristic":"heart"}"#, "x", "'characteristic' is not a UUID: \"heart\""),
        (#"{"id":"x","op":"read","characteristic":"2a19","hex":"00"}"#, "x", "read takes no argument 'hex'"),
        (#"{"id":"x","op":"disconnect","force":true}"#, "x", "disconnect takes no argument 'force'"),
        (#"{"id":"x","op":"write","characteristic":"2a39"}"#, "x", "write needs 'hex'"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"abc"}"#, "x", "'hex' must be an even number of hex digits"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"zz"}"#, "x", "'hex' must be an even number of hex digits"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":""}"#, "x", "'hex' holds no bytes"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","mode":"fast"}"#, "x", "'mode' must be request, command or auto, found \"fast\""),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","qos":"urgent"}"#, "x", "'qos' must be control, normal or bulk, found \"urgent\""),
        (#"{"id":"x","op":"write","characteristic":2,"hex":"00"}"#, "x", "'characteristic' must be a string"),
        (#"{"id":"x","op":"pin","priority":"high"}"#, "x", "'priority' must be an integer"),
        (#"{"id":"x","op":"pin","priority":5000000}"#, "x", "'priority' must be an integer from 0 to 1000"),
        (#"{"id":"x","op":"pin","priority":-1}"#, "x", "'priority' must be an integer from 0 to 1000"),
        (#"{"id":"x","op":"write","characteristic":"2a39","hex":"00","replace":"yes"}"#, "x", "'replace' must be true or false"),
        (#"{"id":"x","op":"subscribe"}"#, "x", "subscribe needs 'characteristic'"),
        (#"{"id":"x","op":"unsubscribe","characteristic":"beat"}"#, "x", "'characteristic' is not a UUID: \"beat\""),
        (#"{"id":"x","op":"pin","address_type":"static"}"#, "x", "'address_type' must be public or random, found \"static\""),
        (#"{"id":"x","op":"pin","name":"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"}"#, "x", "a name has at most 248 bytes (a GAP device name)"),
    ] as [(String, String?, String)])
    func refusals(_ text: String, _ id: String?, _ message: String) {
        let refused = rejection(text)
        #expect(refused?.message == message)
        #expect(refused?.id == id.map { .string($0) })
    }

    @Test func aNumericIdIsEchoedAsANumber() throws {
        let request = try parse(#"{"id":42,"op":"reconnect"}"#)
        let result = String(decoding: MQTTCommandResult.success(request.id, op: "reconnect"), as: UTF8.self)
        #expect(result == #"{"id":42,"op":"reconnect","ok":true}"#)
        let failure = String(decoding: MQTTCommandResult.failure(nil, op: nil, error: "not a JSON object"), as: UTF8.self)
        #expect(failure == #"{"ok":false,"error":"not a JSON object"}"#)
    }

    /// Whatever arrives, parsing answers (a request or a rejection) and never traps.
    @Test func arbitraryBytesNeverTrap() async {
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...200)) { bytes in
            _ = try? MQTTCommandRequest.parse(bytes)
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

    @Test func commandTopicsNameADeviceOrNothing() {
        #expect(topics.commandDevice(in: "wearfleet/device/C0FFEE000001/command") == "C0FFEE000001")
        #expect(topics.commandDevice(in: "wearfleet/device/C0FFEE000001/command/result") == nil)
        #expect(topics.commandDevice(in: "wearfleet/device/XYZ/command") == nil)
        #expect(topics.commandDevice(in: "other/device/C0FFEE000001/command") == nil)
    }
}
