import PropertyBased
import Testing
@testable import GATT

/// Typed values survive encode then decode unchanged, across their whole input space.
@Suite struct RoundTripPropertyTests {
    static let dateTime = zip(
        Gen.uint16(in: 1582...9999), Gen.uint8(in: 0...12), Gen.uint8(in: 0...31),
        Gen.uint8(in: 0...23), Gen.uint8(in: 0...59), Gen.uint8(in: 0...59)
    ).map { DateTime(year: $0.0, month: $0.1, day: $0.2, hours: $0.3, minutes: $0.4, seconds: $0.5) }
    static let sfloat = Gen.uint16().map { MedicalFloat(sfloatBits: $0) }
    static let float = Gen.uint32().map { MedicalFloat(floatBits: $0) }
    static let reading = zip(sfloat, sfloat).map { PLXReading(spo2Percent: $0.0, pulseRateBPM: $0.1) }

    static func roundTrip(_ event: CharacteristicEvent) throws {
        #expect(try CharacteristicRegistry.standard.decode(event.encode(), from: event.uuid) == event)
    }

    @Test func heartRateRoundTrips() async {
        await propertyCheck(
            input: Gen.uint16(), Gen.bool, Gen.uint8(in: 0...2), Gen.uint16().optional(), Gen.uint16().array(of: 0...9)
        ) { bpm, wide, contact, energy, rr in
            let value = HeartRateMeasurement(
                beatsPerMinute: bpm, valueFormat: wide || bpm > 255 ? .uint16 : .uint8,
                sensorContact: [.notSupported, .notDetected, .detected][Int(contact)],
                energyExpendedKilojoules: energy, rrIntervals: rr.map(HeartRateMeasurement.RRInterval.init))
            try Self.roundTrip(.heartRateMeasurement(value))
        }
    }

    @Test func temperatureRoundTrips() async {
        await propertyCheck(input: Self.float, Gen.bool, Self.dateTime.optional(), Gen.uint8().optional()) { t, f, ts, type in
            let value = TemperatureMeasurement(
                temperature: t, unit: f ? .fahrenheit : .celsius, timestamp: ts,
                temperatureType: type.map(TemperatureMeasurement.TemperatureType.init(rawValue:)))
            try Self.roundTrip(.temperatureMeasurement(value))
            try Self.roundTrip(.intermediateTemperature(value))
        }
    }

    @Test func plxSpotCheckRoundTrips() async {
        await propertyCheck(
            input: Self.reading, Self.dateTime.optional(), Gen.uint16().optional(),
            Gen.uint32(in: 0...0xFF_FFFF).optional(), Self.sfloat.optional(), Gen.bool
        ) { reading, ts, status, sensor, pai, clock in
            let value = PLXSpotCheckMeasurement(
                reading: reading, timestamp: ts, measurementStatus: status.map(PLXMeasurementStatus.init),
                deviceAndSensorStatus: sensor.map(PLXDeviceAndSensorStatus.init),
                pulseAmplitudeIndexPercent: pai, deviceClockNotSet: clock)
            try Self.roundTrip(.plxSpotCheckMeasurement(value))
        }
    }

    @Test func plxContinuousRoundTrips() async {
        await propertyCheck(
            input: Self.reading, Self.reading.optional(), Self.reading.optional(), Gen.uint16().optional(),
            Gen.uint32(in: 0...0xFF_FFFF).optional(), Self.sfloat.optional()
        ) { normal, fast, slow, status, sensor, pai in
            let value = PLXContinuousMeasurement(
                normal: normal, fast: fast, slow: slow, measurementStatus: status.map(PLXMeasurementStatus.init),
                deviceAndSensorStatus: sensor.map(PLXDeviceAndSensorStatus.init), pulseAmplitudeIndexPercent: pai)
            try Self.roundTrip(.plxContinuousMeasurement(value))
        }
    }

    @Test func bloodPressureRoundTrips() async {
        await propertyCheck(
            input: zip(Self.sfloat, Self.sfloat, Self.sfloat), Gen.bool, Self.dateTime.optional(),
            Self.sfloat.optional(), Gen.uint8().optional(), Gen.uint16().optional()
        ) { pressures, kpa, ts, pulse, user, status in
            let value = BloodPressureMeasurement(
                systolic: pressures.0, diastolic: pressures.1, meanArterialPressure: pressures.2,
                unit: kpa ? .kilopascal : .millimetersOfMercury, timestamp: ts, pulseRateBPM: pulse, userID: user,
                measurementStatus: status.map(BloodPressureMeasurement.MeasurementStatus.init))
            try Self.roundTrip(.bloodPressureMeasurement(value))
        }
    }

    @Test func rscRoundTrips() async {
        await propertyCheck(
            input: Gen.uint16(), Gen.uint8(), Gen.uint16().optional(), Gen.uint32().optional(), Gen.bool
        ) { speed, cadence, stride, distance, running in
            let value = RSCMeasurement(
                speedRaw: speed, cadenceStepsPerMinute: cadence, strideLengthCentimeters: stride,
                totalDistanceDecimeters: distance, motion: running ? .running : .walking)
            try Self.roundTrip(.rscMeasurement(value))
        }
    }

    @Test func cscRoundTrips() async {
        await propertyCheck(
            input: zip(Gen.uint32(), Gen.uint16()).optional(), zip(Gen.uint16(), Gen.uint16()).optional()
        ) { wheel, crank in
            let value = CSCMeasurement(
                wheel: wheel.map { .init(cumulativeRevolutions: $0.0, lastEventTime1024: $0.1) },
                crank: crank.map { .init(cumulativeRevolutions: $0.0, lastEventTime1024: $0.1) })
            try Self.roundTrip(.cscMeasurement(value))
        }
    }

    @Test func weightRoundTrips() async {
        await propertyCheck(
            input: Gen.bool, Gen.uint16(in: 0...0xFFFE).optional(), Self.dateTime.optional(), Gen.uint8().optional(),
            zip(Gen.uint16(), Gen.uint16()).optional()
        ) { imperial, weight, ts, user, bmi in
            let value = WeightMeasurement(
                unitSystem: imperial ? .imperial : .si, weightRaw: weight, timestamp: ts, userID: user,
                bmiAndHeight: bmi.map { .init(bmiRaw: $0.0, heightRaw: $0.1) })
            try Self.roundTrip(.weightMeasurement(value))
        }
    }

    @Test func currentTimeRoundTrips() async {
        await propertyCheck(input: Self.dateTime, Gen.uint8(in: 0...7), Gen.uint8(), Gen.uint8()) { dt, day, fractions, reason in
            let value = CurrentTime(
                dateTime: dt, dayOfWeek: CurrentTime.DayOfWeek(rawValue: day) ?? .unknown, fractions256: fractions,
                adjustReason: .init(rawValue: reason))
            try Self.roundTrip(.currentTime(value))
            try Self.roundTrip(.dateTime(dt))
        }
    }

    @Test func identityCharacteristicsRoundTrip() async {
        await propertyCheck(
            input: Gen.uint64(in: 0...0xFF_FFFF_FFFF), Gen.uint32(in: 0...0xFF_FFFF), Gen.uint8(), Gen.uint16(),
            Gen.uint8(in: 0...100)
        ) { manufacturer, oui, source, number, percent in
            try Self.roundTrip(.systemID(SystemID(manufacturerIdentifier: manufacturer, organizationallyUniqueIdentifier: oui)))
            try Self.roundTrip(.pnpID(PnPID(
                vendorIDSource: .init(rawValue: source), vendorID: number, productID: ~number, productVersion: number &* 3)))
            try Self.roundTrip(.bodySensorLocation(BodySensorLocation(rawValue: source)))
            try Self.roundTrip(.batteryLevel(try #require(BatteryLevel(percent: percent))))
        }
    }

    @Test func deviceInformationStringsRoundTrip() async {
        await propertyCheck(input: Gen.letterOrNumber.string(of: 0...24), Gen.uint8(in: 0...5)) { text, index in
            let field = DeviceInformationString.Field.allCases[Int(index)]
            try Self.roundTrip(.deviceInformation(DeviceInformationString(field: field, value: text)))
        }
    }
}
