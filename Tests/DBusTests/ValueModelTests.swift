import DBus
import Testing

@Suite("Signatures, validation and typed decoding (no bus)")
struct ValueModelTests {
    @Test("Valid signatures parse and print back unchanged", arguments: [
        "", "s", "a{sv}", "a{oa{sa{sv}}}", "(ii)", "a(yv)", "aay", "(s(ii)as)", "h", "a{qay}",
    ])
    func validSignatures(signature: String) throws {
        #expect(try DBusType.parseList(signature).signature == signature)
    }

    @Test("Invalid signatures are errors, not crashes", arguments: [
        "a", "(", "()", "(i", "a{vs}", "a{s}", "a{sss}", "{sv}", "z", "a{(i)s}",
        String(repeating: "a", count: 33) + "i", String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33),
        String(repeating: "i", count: 256),
    ])
    func invalidSignatures(signature: String) {
        #expect(throws: DBusSignatureError.self) { try DBusType.parseList(signature) }
    }

    @Test func objectPathValidation() {
        for valid in ["/", "/org", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "/a_1/B2"] {
            #expect(throws: Never.self) { try DBusObjectPath(valid) }
        }
        for invalid in ["", "org", "/org/", "//", "/org//bluez", "/org/blu-ez", "/ünï", "/a b"] {
            #expect(throws: DBusValidationError.self) { try DBusObjectPath(invalid) }
        }
    }

    @Test func busNameValidation() {
        for valid in ["org.bluez", ":1.42", "com.example-dash.x_y", "a.b"] {
            #expect(throws: Never.self) { try DBusValidation.checkBusName(valid) }
        }
        for invalid in ["", "org", "org.", ".org", "org..bluez", "1org.bluez", "org.1bluez", "org.blu ez",
            String(repeating: "a.", count: 130) + "a"]
        {
            #expect(throws: DBusValidationError.self) { try DBusValidation.checkBusName(invalid) }
        }
    }

    @Test func interfaceAndMemberValidation() {
        #expect(throws: Never.self) { try DBusValidation.checkInterfaceName("org.bluez.Device1") }
        #expect(throws: DBusValidationError.self) { try DBusValidation.checkInterfaceName("org.bluez-x.Device1") }
        #expect(throws: DBusValidationError.self) { try DBusValidation.checkInterfaceName("Device1") }
        #expect(throws: Never.self) { try DBusValidation.checkMemberName("StartNotify") }
        #expect(throws: DBusValidationError.self) { try DBusValidation.checkMemberName("Start.Notify") }
        #expect(throws: DBusValidationError.self) { try DBusValidation.checkMemberName("1Start") }
    }

    @Test func stringsWithNULAreRejected() {
        #expect(throws: DBusValidationError.self) { try DBusValidation.checkString("a\u{0}b") }
    }

    @Test func decodingTheWrongTypeNamesBothSignatures() {
        let body: [DBusValue] = [.int32(5)]
        #expect { try body.decode(String.self, at: 0) } throws: { error in
            guard let error = error as? DBusDecodingError else { return false }
            return error.expected == "s" && error.actual == "i" && error.context == "argument 0"
        }
    }

    @Test func decodingAMissingArgumentSaysNothingArrived() {
        let body: [DBusValue] = []
        #expect { try body.decode(UInt32.self, at: 1) } throws: { ($0 as? DBusDecodingError)?.actual == "nothing" }
    }

    @Test func decodingAMistypedPropertyNamesTheKey() {
        let map = DBusValue.stringVariantMap(["RSSI": .string("loud")])
        #expect {
            let decoded = try [String: DBusValue](dbusValue: map)
            return try decoded.decodeIfPresent(Int16.self, forKey: "RSSI")
        } throws: { error in
            guard let error = error as? DBusDecodingError else { return false }
            return error.expected == "n" && error.actual == "s" && error.context.contains("RSSI")
        }
    }

    @Test func typedArraysAndDictionariesDecode() throws {
        let body: [DBusValue] = [
            .stringArray(["a", "b"]),
            .dictionary(key: .string, value: .array(.byte), [DBusDictEntry(key: .string("k"), value: .bytes([1, 2]))]),
        ]
        #expect(try body.decode([String].self, at: 0) == ["a", "b"])
        #expect(try body.decode([String: [UInt8]].self, at: 1) == ["k": [1, 2]])
        #expect(throws: DBusDecodingError.self) { try body.decode([Int32].self, at: 0) }
    }

    @Test func matchRulesQuoteTheirValues() {
        let rule = MatchRule(sender: "org.bluez", path: "/org/bluez", member: "PropertiesChanged", arg0: "it's")
        #expect(rule.ruleString == "type='signal',sender='org.bluez',path='/org/bluez',member='PropertiesChanged',arg0='it'\\''s'")
    }
}
