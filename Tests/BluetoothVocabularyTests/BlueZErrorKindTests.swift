import BluetoothVocabulary
import Testing

@Suite("BlueZ error names to kinds")
struct BlueZErrorKindTests {
    @Test func everyKindRoundTripsThroughItsOwnName() {
        for kind in BlueZErrorKind.allCases {
            #expect(BlueZErrorKind(dbusName: kind.dbusName) == kind, "\(kind)")
        }
    }

    @Test func everyKindButOtherIsInTheTable() {
        let tabled = Set(BlueZErrorKind.byName.values)
        #expect(tabled == Set(BlueZErrorKind.allCases).subtracting([.other]))
    }

    @Test(arguments: [
        ("org.freedesktop.DBus.Error.UnknownMethod", BlueZErrorKind.unknownObject),
        ("org.freedesktop.DBus.Error.NameHasNoOwner", .serviceUnavailable),
        ("org.freedesktop.DBus.Error.Timeout", .timeout),
        ("org.freedesktop.DBus.Error.TimedOut", .timeout),
    ])
    func aliasesShareTheirKind(name: String, kind: BlueZErrorKind) {
        #expect(BlueZErrorKind(dbusName: name) == kind)
    }

    @Test func namesMatchExactlyAndCaseSensitively() {
        #expect(BlueZErrorKind(dbusName: "org.bluez.error.inprogress") == .other)
        #expect(BlueZErrorKind(dbusName: "org.bluez.Error.InProgress ") == .other)
        #expect(BlueZErrorKind(dbusName: "") == .other)
    }
}
