import Fleet
import FleetCore
@testable import FleetMQTT
import GATT
import Logging
import Synchronization
import Testing

/// What the `mqtt` thread makes of values: every value on its value topic (QoS 0, not
/// retained), and a measurement taken now and then (a cuff's, a scale's) also retained on
/// `…/<kind>/latest`, so a consumer that starts while the device sleeps still has it.
@Suite struct MQTTValueRendererTests {
    static let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "g", discoveryPrefix: "homeassistant")
    static let cuff = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:05")!)

    /// The pipeline's values for `readings` (characteristic, bytes), in order.
    static func values(_ readings: [(BluetoothUUID, [UInt8])]) -> [ValuePipeline.Value] {
        let pipeline = ValuePipeline(logger: Logger(label: "renderer-test") { _ in SwiftLogNoOpLogHandler() })
        let collected = Mutex<[ValuePipeline.Value]>([])
        _ = pipeline.tap { value in collected.withLock { $0.append(value) } }
        for (uuid, bytes) in readings { pipeline.ingest(device: cuff, characteristic: uuid.description, bytes: bytes) }
        return collected.withLock { $0 }
    }

    @Test func aMeasurementIsAlsoKeptRetainedAsTheDevicesLatest() async throws {
        let bloodPressure: [UInt8] = [0x0C, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00, 0x48, 0x00, 1]
        let laterBloodPressure: [UInt8] = [0x0C, 0x79, 0x00, 0x51, 0x00, 0x5D, 0x00, 0x48, 0x00, 1]
        let values = Self.values([
            (.bloodPressureMeasurement, bloodPressure), (.batteryLevel, [87]), (.bloodPressureMeasurement, laterBloodPressure),
            (.weightMeasurement, [0x00, 0xA4, 0x38]),
        ])
        #expect(values.count == 4)
        let route = MQTTValueRoute(topics: Self.topics)
        route.describe(Self.cuff, MQTTValueRoute.DeviceContext(name: "Cuff"))
        var renderer = MQTTValueRenderer(route: route)
        var messages: [MQTTMessage] = []
        var copies: [MQTTValueRenderer.LatestCopy] = []
        renderer.render(values, into: &messages, retained: &copies)
        var retained: [MQTTMessage] { copies.map(\.message) }
        #expect(copies.allSatisfy { $0.device == Self.cuff })

        // One message per value, in order: the loop maps a message back to its value by position
        // when the socket fills.
        #expect(messages.map(\.topic) == [
            "wearfleet/device/C0FFEE000005/blood_pressure", "wearfleet/device/C0FFEE000005/battery",
            "wearfleet/device/C0FFEE000005/blood_pressure", "wearfleet/device/C0FFEE000005/weight",
        ], "every value on its value topic")
        #expect(messages.allSatisfy { $0.qos == 0 && !$0.retain })
        #expect(retained.map(\.topic) == [
            "wearfleet/device/C0FFEE000005/blood_pressure/latest", "wearfleet/device/C0FFEE000005/blood_pressure/latest",
            "wearfleet/device/C0FFEE000005/weight/latest",
        ], "a battery level is no measurement")
        #expect(retained.allSatisfy { $0.qos == 1 && $0.retain })
        // The same bytes as the value message it copies.
        #expect(retained[1].payload == messages[2].payload)
        #expect(Self.topics.latestValues(of: Self.cuff) == [
            "wearfleet/device/C0FFEE000005/blood_pressure/latest", "wearfleet/device/C0FFEE000005/weight/latest",
        ])

        // Forgotten by the bridge (its topics deleted): a value still on its way goes to its value
        // topic, but brings no `latest` back.
        route.forget(Self.cuff)
        messages.removeAll()
        copies.removeAll()
        renderer.render(values.prefix(1), into: &messages, retained: &copies)
        #expect(messages.count == 1 && copies.isEmpty)
        #expect(!route.describes(Self.cuff))
        // Nor is it handed to the bridge to learn (its entities would come back): the values
        // handed over are those of the first render only, while the cuff was described.
        route.finish()
        var handedOver = 0
        for await _ in route.notable { handedOver += 1 }
        #expect(handedOver == 3, "each kind's first value (the battery level among them), before the cuff was forgotten")
    }
}
