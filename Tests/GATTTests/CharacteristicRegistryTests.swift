import Testing
@testable import GATT

@Suite struct CharacteristicRegistryTests {
    /// One valid payload per standard characteristic, with the event name it must produce.
    static let samples: [(uuid: BluetoothUUID, bytes: [UInt8], name: String)] = [
        (.heartRateMeasurement, [0x00, 0x48], "heart_rate_measurement"),
        (.bodySensorLocation, [0x01], "body_sensor_location"),
        (.batteryLevel, [0x55], "battery_level"),
        (.modelNumberString, [0x41], "device_information"),
        (.serialNumberString, [0x41], "device_information"),
        (.firmwareRevisionString, [0x41], "device_information"),
        (.hardwareRevisionString, [0x41], "device_information"),
        (.softwareRevisionString, [0x41], "device_information"),
        (.manufacturerNameString, [0x41], "device_information"),
        (.systemID, [1, 2, 3, 4, 5, 6, 7, 8], "system_id"),
        (.pnpID, [1, 2, 3, 4, 5, 6, 7], "pnp_id"),
        (.temperatureMeasurement, [0x00, 0x6D, 0x01, 0x00, 0xFF], "temperature_measurement"),
        (.intermediateTemperature, [0x00, 0x6D, 0x01, 0x00, 0xFF], "intermediate_temperature"),
        (.plxSpotCheckMeasurement, [0x00, 0x62, 0x00, 0x48, 0x00], "plx_spot_check_measurement"),
        (.plxContinuousMeasurement, [0x00, 0x62, 0x00, 0x48, 0x00], "plx_continuous_measurement"),
        (.bloodPressureMeasurement, [0x00, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00], "blood_pressure_measurement"),
        (.rscMeasurement, [0x00, 0x00, 0x03, 0xAA], "rsc_measurement"),
        (.cscMeasurement, [0x00], "csc_measurement"),
        (.weightMeasurement, [0x00, 0xB0, 0x36], "weight_measurement"),
        (.currentTime, Fragment.dateTimeBytes + [0x02, 0x00, 0x00], "current_time"),
        (.dateTime, Fragment.dateTimeBytes, "date_time"),
    ]

    @Test func everyRegisteredDecoderHasASampleAndViceVersa() {
        #expect(Set(Self.samples.map(\.uuid)) == Set(CharacteristicRegistry.standard.registeredUUIDs))
    }

    @Test(arguments: samples.indices)
    func everyDecoderIsReachableFromTheRegistry(index: Int) throws {
        let sample = Self.samples[index]
        let event = try CharacteristicRegistry.standard.decode(sample.bytes, from: sample.uuid)
        #expect(event.name == sample.name)
        #expect(event.uuid == sample.uuid)
    }

    @Test(arguments: samples.indices)
    func fullSpellingOfTheUUIDFindsTheSameDecoder(index: Int) throws {
        let sample = Self.samples[index]
        let parsed = try #require(BluetoothUUID(sample.uuid.description))
        #expect(try CharacteristicRegistry.standard.decode(sample.bytes, from: parsed).name == sample.name)
    }

    @Test func unknownCharacteristicYieldsARawHexEvent() throws {
        let uuid = try #require(BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e"))
        let event = try CharacteristicRegistry.standard.decode([0xDE, 0xAD, 0x01], from: uuid)
        #expect(event == .raw(RawCharacteristicValue(uuid: uuid, bytes: [0xDE, 0xAD, 0x01])))
        #expect(event.keyValuePairs.map { [$0.key, $0.value] } == [
            ["uuid", "6e400003-b5a3-f393-e0a9-e50e24dcca9e"], ["raw_hex", "dead01"],
        ])
    }

    @Test func knownCharacteristicWithBadPayloadThrowsInsteadOfFallingBackToRaw() {
        #expect(throws: GATTDecodeError.self) { try CharacteristicRegistry.standard.decode([0x01], from: .heartRateMeasurement) }
    }

    @Test func emptyRegistryDecodesEverythingAsRaw() throws {
        #expect(try CharacteristicRegistry().decode([0x00, 0x48], from: .heartRateMeasurement).name == "raw")
    }

    @Test func registeringReplacesADecoder() throws {
        let registry = CharacteristicRegistry.standard.registering(.batteryLevel) { bytes throws(GATTDecodeError) in
            .raw(RawCharacteristicValue(uuid: .batteryLevel, bytes: Array(bytes)))
        }
        #expect(try registry.decode([0x55], from: .batteryLevel).name == "raw")
        #expect(try CharacteristicRegistry.standard.decode([0x55], from: .batteryLevel).name == "battery_level")
    }

    @Test func decodesFromASliceOfALargerBuffer() throws {
        let buffer: [UInt8] = [0xFF, 0xFF, 0x00, 0x48, 0xFF]
        #expect(try CharacteristicRegistry.standard.decode(buffer[2...3], from: .heartRateMeasurement)
            == .heartRateMeasurement(HeartRateMeasurement(beatsPerMinute: 72)))
    }

    @Test func eventRenderingMatchesTheDocumentedExample() throws {
        let event = try CharacteristicRegistry.standard.decode([0x16, 0x48, 0x40, 0x03, 0x32, 0x03], from: .heartRateMeasurement)
        #expect(event.keyValuePairs.map { [$0.key, $0.value] } == [
            ["heart_rate_bpm", "72"], ["rr_intervals_ms", "812.5,798.8"], ["sensor_contact", "detected"],
        ])
        #expect(event.summary == "72 bpm, RR 812/799 ms")
    }

    @Test(arguments: samples.indices)
    func everyEventRendersNonEmptySnakeCaseKeys(index: Int) throws {
        let sample = Self.samples[index]
        let event = try CharacteristicRegistry.standard.decode(sample.bytes, from: sample.uuid)
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_")
        for (key, _) in event.keyValuePairs {
            #expect(!key.isEmpty && key.allSatisfy(allowed.contains), "key \(key)")
        }
        #expect(!event.summary.isEmpty)
    }
}
