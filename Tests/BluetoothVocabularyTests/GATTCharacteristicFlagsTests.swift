import BluetoothVocabulary
import Testing

@Suite("GATT characteristic flags")
struct GATTCharacteristicFlagsTests {
    @Test func everyBlueZWordParsesToItsOwnFlag() {
        var seen: GATTCharacteristicFlags = []
        for (flag, name) in GATTCharacteristicFlags.bluezNames {
            #expect(GATTCharacteristicFlags(bluezFlags: [name]) == flag, "\(name)")
            #expect(seen.isDisjoint(with: flag), "\(name) shares a bit")
            seen.formUnion(flag)
        }
        #expect(GATTCharacteristicFlags.bluezNames.count == 23)
    }

    @Test func aSetSpellsBackInBlueZsOrder() {
        let flags = GATTCharacteristicFlags(bluezFlags: ["notify", "write", "write-without-response"])
        #expect(flags == [.notify, .write, .writeWithoutResponse])
        #expect(flags.bluezFlags == ["write-without-response", "write", "notify"])
        #expect(GATTCharacteristicFlags(bluezFlags: flags.bluezFlags) == flags)
    }

    @Test func unknownWordsAreIgnored() {
        #expect(GATTCharacteristicFlags(bluezFlags: ["read", "some-future-flag", "READ"]) == [.read])
        #expect(GATTCharacteristicFlags(bluezFlags: []).isEmpty)
    }

    @Test func groupsCoverTheirMembers() {
        #expect(GATTCharacteristicFlags.anyNotification == [.notify, .indicate])
        #expect(GATTCharacteristicFlags.anyWrite.contains(.authenticatedSignedWrites))
    }
}
