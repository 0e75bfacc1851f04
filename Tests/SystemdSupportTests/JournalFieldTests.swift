import Testing
@testable import SystemdSupport

@Suite struct JournalFieldTests {
    @Test(arguments: [
        ("device.address", "DEVICE_ADDRESS"),
        ("device_address", "DEVICE_ADDRESS"),
        ("deviceAddress", "DEVICE_ADDRESS"),
        ("Device-Address", "DEVICE_ADDRESS"),
        ("DEVICE_ADDRESS", "DEVICE_ADDRESS"),
        ("session.id", "SESSION_ID"),
        ("bluez.error", "BLUEZ_ERROR"),
        ("error_class", "ERROR_CLASS"),
        ("adapter", "ADAPTER"),
        ("device..state", "DEVICE_STATE"),
        ("_SYSTEMD_UNIT", "SYSTEMD_UNIT"),  // a client must never claim a trusted field
        ("2fa.code", "FA_CODE"),
        ("gatt.uuid-0x2a37", "GATT_UUID_0X2A37"),
        ("débit", "D_BIT"),
    ])
    func metadataKeysBecomeValidFieldNames(key: String, expected: String) {
        #expect(JournalField.sanitizedName(key) == expected)
        #expect(JournalField.isValidName(expected))
    }

    @Test(arguments: ["", "_", "...", "123", "__9", "ü"])
    func keysWithNothingUsableAreDropped(key: String) {
        #expect(JournalField.sanitizedName(key) == nil)
    }

    @Test func longKeysAreCutTo64Characters() throws {
        let name = try #require(JournalField.sanitizedName(String(repeating: "a", count: 63) + ".bcdef"))
        #expect(name.count <= 64)
        #expect(!name.hasSuffix("_"))
        #expect(JournalField.isValidName(name))
    }

    @Test func invalidNamesAreRejectedNotFixed() {
        #expect(JournalField(name: "device_address", value: "x") == nil)
        #expect(JournalField(name: "_PID", value: "1") == nil)
        #expect(JournalField(name: "1ABC", value: "1") == nil)
        #expect(JournalField(name: String(repeating: "A", count: 65), value: "1") == nil)
        #expect(JournalField(name: "MESSAGE", value: "ok") != nil)
    }
}
