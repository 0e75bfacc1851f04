import Testing
@testable import GATT

@Suite struct SimpleCharacteristicTests {
    @Test(arguments: [(UInt8(0), BodySensorLocation.other), (1, .chest), (2, .wrist), (3, .finger), (4, .hand),
                      (5, .earLobe), (6, .foot), (7, .reserved(7)), (255, .reserved(255))])
    func bodySensorLocationDecodesEveryDefinedValue(raw: UInt8, expected: BodySensorLocation) throws {
        #expect(try BodySensorLocation.decode([raw]) == expected)
        #expect(expected.rawValue == raw)
    }

    @Test func batteryLevelDecodesPercent() throws {
        #expect(try BatteryLevel.decode([0x64]).percent == 100)
        #expect(try BatteryLevel.decode([0x00]).percent == 0)
    }

    @Test func batteryLevelAbove100IsOutOfRange() {
        #expect(throws: GATTDecodeError(field: "battery_level", offset: 0, reason: .outOfRange(value: 101))) {
            try BatteryLevel.decode([101])
        }
    }

    @Test(arguments: DeviceInformationString.Field.allCases)
    func deviceInformationStringsDecodeFromTheRegistry(field: DeviceInformationString.Field) throws {
        let event = try CharacteristicRegistry.standard.decode(Array("Acme HR-1".utf8), from: field.uuid)
        #expect(event == .deviceInformation(DeviceInformationString(field: field, value: "Acme HR-1")))
        #expect(event.keyValuePairs.map(\.key) == [field.rawValue])
    }

    @Test func deviceInformationStripsTrailingNULPadding() throws {
        #expect(try DeviceInformationString.decode([0x31, 0x2E, 0x30, 0x00, 0x00], field: .firmwareRevision).value == "1.0")
    }

    @Test func deviceInformationRejectsInvalidUTF8() {
        #expect(throws: GATTDecodeError(field: "string", offset: 0, reason: .invalidUTF8)) {
            try DeviceInformationString.decode([0x41, 0xFF, 0x42], field: .manufacturerName)
        }
    }

    @Test func systemIDSplitsManufacturerAndOUI() throws {
        let value = try SystemID.decode([0x05, 0x04, 0x03, 0x02, 0x01, 0xCC, 0xBB, 0xAA])
        #expect(value == SystemID(manufacturerIdentifier: 0x01_0203_0405, organizationallyUniqueIdentifier: 0xAA_BBCC))
        #expect(value.keyValuePairs.map(\.value) == ["0102030405", "aabbcc"])
    }

    @Test func pnpIDDecodesEveryField() throws {
        let value = try PnPID.decode([0x01, 0x0D, 0x00, 0x34, 0x12, 0x23, 0x01])
        #expect(value == PnPID(vendorIDSource: .bluetoothSIG, vendorID: 0x000D, productID: 0x1234, productVersion: 0x0123))
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["vendor_id_source", "bluetooth_sig"], ["vendor_id", "0x000d"], ["product_id", "0x1234"],
            ["product_version", "1.2.3"],
        ])
    }

    @Test func pnpIDKeepsUnknownVendorSource() throws {
        #expect(try PnPID.decode([0x02, 0, 0, 0, 0, 0, 0]).vendorIDSource == .usbImplementersForum)
        #expect(try PnPID.decode([0x09, 0, 0, 0, 0, 0, 0]).vendorIDSource == .reserved(9))
    }

    @Test func dateTimeDecodesAllFields() throws {
        #expect(try DateTime.decode(Fragment.dateTimeBytes) == Fragment.dateTime)
        #expect(Fragment.dateTime.description == "2024-03-05T14:07:09")
    }

    @Test func dateTimeAcceptsUnknownZeroes() throws {
        #expect(try DateTime.decode([0, 0, 0, 0, 0, 0, 0]) == DateTime(year: 0, month: 0, day: 0, hours: 0, minutes: 0, seconds: 0))
    }

    @Test(arguments: [
        ([0x2D, 0x06, 1, 1, 0, 0, 0] as [UInt8], "year", 0, UInt64(1581)),
        ([0xE8, 0x07, 1, 32, 0, 0, 0], "day", 3, 32),
        ([0xE8, 0x07, 1, 1, 24, 0, 0], "hours", 4, 24),
        ([0xE8, 0x07, 1, 1, 0, 60, 0], "minutes", 5, 60),
        ([0xE8, 0x07, 1, 1, 0, 0, 60], "seconds", 6, 60),
    ])
    func dateTimeRejectsOutOfRangeFields(bytes: [UInt8], field: String, offset: Int, value: UInt64) {
        #expect(throws: GATTDecodeError(field: field, offset: offset, reason: .outOfRange(value: value))) {
            try DateTime.decode(bytes)
        }
    }

    @Test(arguments: 0..<16)
    func currentTimeDecodesEveryAdjustReasonCombination(reason: Int) throws {
        let bytes = Fragment.dateTimeBytes + [0x02, 0x80, UInt8(reason)]
        let expected = CurrentTime(
            dateTime: Fragment.dateTime, dayOfWeek: .tuesday, fractions256: 128,
            adjustReason: CurrentTime.AdjustReason(rawValue: UInt8(reason)))
        #expect(try CurrentTime.decode(bytes) == expected)
    }

    @Test func currentTimeRejectsDayOfWeekAbove7() {
        #expect(throws: GATTDecodeError(field: "day_of_week", offset: 7, reason: .outOfRange(value: 8))) {
            try CurrentTime.decode(Fragment.dateTimeBytes + [0x08, 0x00, 0x00])
        }
    }

    @Test func currentTimeRendersAdjustReasonNames() throws {
        let value = try CurrentTime.decode(Fragment.dateTimeBytes + [0x07, 0x00, 0x05])
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["date_time", "2024-03-05T14:07:09"], ["day_of_week", "sunday"], ["fractions256", "0"],
            ["adjust_reason", "manual_time_update,change_of_time_zone"],
        ])
    }
}
