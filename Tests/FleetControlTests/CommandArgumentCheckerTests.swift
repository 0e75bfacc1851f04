import FleetControl
import FleetCore
import Testing

/// The one checker, kind by kind and front end by front end: what each raw form becomes, and
/// how each refusal names the argument, the form expected and the D-Bus error.
@Suite struct CommandArgumentCheckerTests {
    let errors = WearfleetControl.ErrorName.self
    static let strap = "AA:BB:CC:00:00:01"

    private func check(
        _ name: CommandName, _ raw: [String: RawCommandValue], on frontEnd: CommandFrontEnd = .dbus
    ) throws(CommandRejection) -> CheckedCommand {
        try CommandArgumentChecker.check(name.declaration, raw, on: frontEnd)
    }

    private func rejection(_ name: CommandName, _ raw: [String: RawCommandValue], on frontEnd: CommandFrontEnd = .dbus) -> CommandRejection? {
        do {
            _ = try check(name, raw, on: frontEnd)
            return nil
        } catch {
            return error
        }
    }

    private func write(_ extra: [String: RawCommandValue], on frontEnd: CommandFrontEnd = .dbus) -> [String: RawCommandValue] {
        let uuid = frontEnd == .mqtt ? "characteristic" : "uuid"
        let value = frontEnd == .mqtt ? "hex" : "value"
        let bytes: RawCommandValue = frontEnd == .dbus ? .bytes([1]) : .text("01")
        return ["address": .text(Self.strap), uuid: .text("2a39"), value: bytes].merging(extra) { $1 }
    }

    // MARK: - Each kind

    @Test func addressesInEitherCaseAndNothingElse() throws {
        let command = try check(.unpin, ["address": .text("aa:bb:cc:00:00:01")])
        #expect(command.address?.description == Self.strap)
        let refused = rejection(.unpin, ["address": .text("strap-1")])
        #expect(refused?.errorName == errors.invalidAddress)
        #expect(refused?.description == "'address' must be a Bluetooth address (AA:BB:CC:DD:EE:FF), found \"strap-1\"")
        #expect(refused?.commandLineDescription == "invalid address 'strap-1': expected a Bluetooth address (AA:BB:CC:DD:EE:FF)")
    }

    @Test func addressTypesArePublicOrRandom() throws {
        #expect(try check(.pin, ["address": .text(Self.strap), "address_type": .text("random")]).addressType("address_type") == .random)
        let refused = rejection(.pin, ["address": .text(Self.strap), "address_type": .text("static")])
        #expect(refused?.description == "'address_type' must be public or random, found \"static\"")
        #expect(refused?.errorName == errors.invalidOption)
        #expect(rejection(.pin, ["address": .text(Self.strap), "address_type": .integer(1)])?.description == "'address_type' must be a string")
    }

    @Test func uuidsInEveryFormKeepTheirSpelling() throws {
        for uuid in ["2a19", "2A19", "0000180d", "00002a37-0000-1000-8000-00805f9b34fb"] {
            #expect(try check(.read, ["address": .text(Self.strap), "uuid": .text(uuid)]).uuid("uuid") == uuid)
        }
        let refused = rejection(.read, ["address": .text(Self.strap), "uuid": .text("2a1")])
        #expect(refused?.errorName == errors.invalidUUID)
        #expect(refused?.description == "'uuid' must be a Bluetooth UUID (2a37, or the 32- or 128-bit form), found \"2a1\"")
    }

    @Test func bytesFromDBusOrHexWithinOneTo512() throws {
        #expect(try check(.write, write([:])).bytes("value") == [1])
        #expect(try check(.write, write(["value": .word("0a:1B")], on: .cli), on: .cli).bytes("value") == [0x0a, 0x1b])
        #expect(try check(.write, write(["hex": .text("0A1b")], on: .mqtt), on: .mqtt).bytes("value") == [0x0a, 0x1b])
        let long = rejection(.write, write(["value": .bytes(Array(repeating: 0, count: 513))]))
        #expect(long?.errorName == errors.tooLarge && long?.description == "'value' must be 1 to 512 bytes long")
        #expect(try check(.write, write(["value": .bytes(Array(repeating: 0, count: 512))])).bytes("value")?.count == 512)
        let empty = rejection(.write, write(["value": .bytes([])]))
        #expect(empty?.errorName == errors.invalidOption && empty?.description == "'value' must be 1 to 512 bytes long")
        #expect(rejection(.write, write(["hex": .text("abc")], on: .mqtt), on: .mqtt)?.description == "'hex' must be an even number of hex digits")
        let cli = rejection(.write, write(["value": .word("0g")], on: .cli), on: .cli)
        #expect(cli?.commandLineDescription == "invalid value '0g': expected an even number of hex digits")
        #expect(rejection(.write, write(["hex": .number("1")], on: .mqtt), on: .mqtt)?.description == "'hex' must be a string of hex digits")
    }

    @Test func stringsWithinTheirByteLimits() throws {
        let pin = { (extra: [String: RawCommandValue]) in ["address": RawCommandValue.text(Self.strap)].merging(extra) { $1 } }
        #expect(try check(.pin, pin(["class": .text(String(repeating: "c", count: 64))])).string("class")?.count == 64)
        #expect(rejection(.pin, pin(["class": .text(String(repeating: "c", count: 65))]))?.description == "'class' must be 1 to 64 bytes long")
        #expect(rejection(.pin, pin(["class": .text("")]))?.description == "'class' must be 1 to 64 bytes long")
        // Bytes, not characters: 124 two-byte characters are 248 bytes.
        #expect(try check(.pin, pin(["name": .text(String(repeating: "é", count: 124))])).string("name") != nil)
        #expect(rejection(.pin, pin(["name": .text(String(repeating: "é", count: 125))]))?.description == "'name' must be at most 248 bytes long")
        #expect(try check(.pin, pin(["name": .text("")])).string("name") == "")
    }

    @Test func integersWithinTheirRangeFromEveryFrontEnd() throws {
        let pin = { (priority: RawCommandValue) in ["address": RawCommandValue.text(Self.strap), "priority": priority] }
        #expect(try check(.pin, pin(.integer(1000))).integer("priority") == 1000)
        #expect(try check(.pin, pin(.number("5")), on: .mqtt).integer("priority") == 5)
        #expect(try check(.pin, pin(.word("0")), on: .cli).integer("priority") == 0)
        #expect(try check(.pin, ["address": .text(Self.strap)]).integer("priority") == 0, "the default")
        for out in [RawCommandValue.integer(1001), .integer(-1), .number("5.5"), .number("5000000")] {
            #expect(rejection(.pin, pin(out), on: .mqtt)?.description == "'priority' must be an integer from 0 to 1000")
        }
        #expect(rejection(.pin, pin(.text("high")))?.description == "'priority' must be an integer")
        #expect(rejection(.pin, pin(.word("high")), on: .cli)?.description == "'priority' must be an integer")
        #expect(rejection(.pin, pin(.text("high")))?.errorName == errors.invalidOption)
    }

    @Test func wordsAreOneOfTheirList() throws {
        #expect(try check(.write, write(["qos": .text("bulk")])).word("qos") == "bulk")
        #expect(rejection(.write, write(["qos": .text("urgent")]))?.description == "'qos' must be control, normal or bulk, found \"urgent\"")
        #expect(rejection(.write, write(["mode": .text("fast")]))?.description == "'mode' must be request, command or auto, found \"fast\"")
    }

    @Test func boolsAreTrueOrFalse() throws {
        #expect(try check(.write, write(["replace": .bool(true)])).bool("replace") == true)
        #expect(try check(.write, write(["replace": .word("true")], on: .cli), on: .cli).bool("replace") == true)
        #expect(rejection(.write, write(["replace": .text("yes")]))?.description == "'replace' must be true or false")
    }

    // MARK: - Names, presence, defaults

    @Test func unknownArgumentsAreRefusedFirstAndNamed() {
        let refused = rejection(.write, write(["retries": .integer(3)]))
        #expect(refused?.description == "write takes no argument 'retries'" && refused?.errorName == errors.invalidOption)
        // Each front end's names only: MQTT's key is not a D-Bus option.
        #expect(rejection(.read, ["address": .text(Self.strap), "characteristic": .text("2a19")])?.description
            == "read takes no argument 'characteristic'")
    }

    @Test func missingArgumentsAreNamedAsTheFrontEndCallsThem() {
        #expect(rejection(.read, ["address": .text(Self.strap)])?.description == "read needs 'uuid'")
        #expect(rejection(.read, ["address": .text(Self.strap)], on: .mqtt)?.description == "read needs 'characteristic'")
        #expect(rejection(.read, ["address": .text(Self.strap)])?.errorName == errors.invalidUUID)
    }

    @Test func writesModeDefaultsAsEachFrontEndDidAndAliasesSetIt() throws {
        #expect(try check(.write, write([:])).word("mode") == "request")
        #expect(try check(.write, write([:], on: .cli), on: .cli).word("mode") == "request")
        #expect(try check(.write, write([:], on: .mqtt), on: .mqtt).word("mode") == "auto")
        #expect(try check(.write, write(["without_response": .bool(true)])).word("mode") == "command")
        #expect(try check(.write, write(["without_response": .bool(false)])).word("mode") == "request")
        #expect(try check(.write, write(["without_response": .bool(true)], on: .cli), on: .cli).given["mode"] == .word("command"))
        // MQTT never had the alias.
        #expect(rejection(.write, write(["without_response": .bool(true)], on: .mqtt), on: .mqtt)?.description
            == "write takes no argument 'without_response'")
        #expect(rejection(.write, write(["without_response": .text("yes")]))?.description == "'without_response' must be true or false")
        #expect(rejection(.write, write(["without_response": .bool(true), "mode": .text("request")]))?.problem == .conflicting(with: "without_response"))
    }

    @Test func givenValuesAreKeptApartFromDefaults() throws {
        let command = try check(.pin, ["address": .text(Self.strap)])
        #expect(command.given.keys.sorted() == ["address"])
        #expect(command.integer("priority") == 0 && command.string("class") == nil)
    }

    @Test func impliedValuesComeFromTheFrontEndAndCannotBeGivenAgain() throws {
        let address = try #require(BluetoothAddress(Self.strap))
        let command = try CommandArgumentChecker.check(CommandName.unpin.declaration, [:], on: .mqtt, implied: ["address": .address(address)])
        #expect(command.address == address)
        #expect(throws: CommandRejection.self) {
            try CommandArgumentChecker.check(
                CommandName.unpin.declaration, ["address": .text(Self.strap)], on: .mqtt, implied: ["address": .address(address)])
        }
    }
}
