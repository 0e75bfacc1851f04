import Fleet
import FleetConfiguration
import FleetControl
import FleetCore
import Foundation
import Testing

/// The catalogue holds together: names unique, every error documented, limits as the fleet's,
/// the generated D-Bus methods as they always were, README's tables as rendered.
@Suite struct CommandCatalogueTests {
    @Test func namesAreUniqueAndEachFindsItsDeclaration() {
        let all = CommandCatalogue.all
        #expect(Set(all.map(\.op)).count == all.count)
        #expect(Set(all.map(\.member)).count == all.count)
        for declaration in all {
            #expect(CommandCatalogue.declaration(op: declaration.op)?.member == declaration.member)
            #expect(CommandCatalogue.declaration(member: declaration.member)?.op == declaration.op)
            #expect(Set(declaration.arguments.map(\.name)).count == declaration.arguments.count, "\(declaration.op)")
            #expect(Set(declaration.arguments.map(\.jsonKey)).count == declaration.arguments.count, "\(declaration.op)")
            for alias in declaration.aliases {
                #expect(declaration.argument(named: alias.argument) != nil, "\(declaration.op): \(alias.name)")
                #expect(declaration.argument(named: alias.name) == nil, "\(declaration.op): \(alias.name) shadows an argument")
            }
            // MQTT's device scope takes the address from its topic.
            if declaration.scopes.contains(.device) { #expect(declaration.arguments.first?.name == "address", "\(declaration.op)") }
            // Positional arguments are required: the command line reads them in order.
            #expect(declaration.positionalArguments.allSatisfy { $0.required }, "\(declaration.op)")
        }
    }

    @Test func everyErrorACommandAnswersIsDocumented() {
        let documented = Set(CommandCatalogue.errorDocumentation.map(\.name))
        #expect(documented.count == CommandCatalogue.errorDocumentation.count)
        for declaration in CommandCatalogue.all {
            for name in declaration.allErrors { #expect(documented.contains(name), "\(declaration.op): \(name)") }
        }
    }

    @Test func everyErrorTheRunnerAnswersIsDocumented() {
        let documented = Set(CommandCatalogue.errorDocumentation.map(\.name))
        let device = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!)
        let commandErrors: [FleetCommandError] = [
            .unknownDevice(device), .unknownClass("x"), .alreadyPinned(device), .pinnedByConfiguration(device, definedAt: nil),
            .notPinned(device), .notConnected(device), .invalidCharacteristic("x"), .unknownCharacteristic(device, "x"),
            .notPermitted(device, "x", operation: "read"), .alreadySubscribed(device, "x"), .notSubscribed(device, "x"),
            .failed(DeviceEvent.Failure(.timeout, message: "x")), .notSaved(reason: "x"), .invalidPinOptions("x"), .tooManyRuntimePins(limit: 1),
        ]
        for error in commandErrors { #expect(documented.contains(FleetCommandRunner.errorName(error)), "\(error)") }
    }

    @Test func theLimitsAreTheFleets() {
        #expect(CommandCatalogue.priorities == FleetPinOptions.priorities)
        #expect(MQTTSettings.CommandOp.allCases.map(\.rawValue) == CommandCatalogue.all.map(\.op))
    }

    /// The generated methods keep the signatures `org.wearfleet.Daemon1` always had.
    @Test func theDBusMethodsKeepTheirSignatures() {
        let signatures = Dictionary(uniqueKeysWithValues: CommandCatalogue.all.map { declaration in
            (declaration.member, declaration.dbusInputs.map(\.type.signature).joined() + " → " + declaration.dbusOutputs.map(\.type.signature).joined())
        })
        #expect(signatures == [
            "Pin": "sa{sv} → ", "Unpin": "s → ", "Disconnect": "s → ", "Reconnect": "s → ", "Read": "ss → ay",
            "Subscribe": "ss → ", "Unsubscribe": "ss → ", "Write": "ssaya{sv} → s", "Nearby": "a{sv} → aa{sv}",
            "Pair": "s → ", "Unpair": "s → ",
        ])
        #expect(CommandName.write.declaration.dbusInputs.map(\.name) == ["address", "uuid", "value", "options"])
        #expect(CommandName.write.declaration.dbusOutputs.map(\.name) == ["outcome"])
        #expect(CommandName.read.declaration.dbusOutputs.map(\.name) == ["value"])
    }

    @Test func gatewayOpsArePinUnpinAndNearby() {
        #expect(CommandCatalogue.all.filter { $0.scopes.contains(.gateway) }.map(\.op) == ["pin", "unpin", "nearby"])
        #expect(CommandCatalogue.all.filter { !$0.scopes.contains(.device) }.map(\.op) == ["nearby"], "nearby is about no device")
    }

    /// README's tables are the catalogue's (regenerate: WEARFLEET_WRITE_README=1 swift test --filter CommandCatalogueTests).
    @Test func readmeHasTheRenderedTables() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md").path
        let readme = try String(contentsOfFile: path, encoding: .utf8)
        let rendered = try #require(CommandCatalogue.replacingMarkdownSections(in: readme), "README has every marker")
        if rendered != readme, ProcessInfo.processInfo.environment["WEARFLEET_WRITE_README"] == "1" {
            try rendered.write(toFile: path, atomically: true, encoding: .utf8)
        }
        for (marker, text) in CommandCatalogue.markdownSections {
            #expect(readme.contains("<!-- commands:\(marker) -->\n" + text + "<!-- /commands:\(marker) -->"), "section \(marker)")
        }
    }
}

/// Wherever README lists the device states (the MQTT state, D-Bus `State`, the metric, Home
/// Assistant's `enum`), it lists every one of them, and every `allow_commands` op.
@Suite struct ReadmeListsTests {
    static func readme() throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md").path
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func everyListOfDeviceStatesHasThemAll() throws {
        let readme = try Self.readme()
        // A list of states: a paragraph (lines joined) naming `resolving` and `backingOff`.
        let paragraphs = readme.components(separatedBy: "\n\n").map { $0.replacingOccurrences(of: "\n", with: " ") }
        let lists = paragraphs.flatMap { $0.components(separatedBy: "|") }.filter { $0.contains("`resolving`") && $0.contains("`backingOff`") }
        #expect(lists.count >= 4, "the MQTT state, D-Bus State, the state gauge, Home Assistant's enum")
        for list in lists {
            for state in DeviceState.names { #expect(list.contains("`\(state)`"), "\(state) missing in: \(list.prefix(120))") }
        }
    }

    @Test func allowCommandsNamesEveryOp() throws {
        let row = try #require(try Self.readme().split(separator: "\n").first { $0.hasPrefix("| `allow_commands` |") })
        for op in CommandName.allCases { #expect(row.contains("`\(op.rawValue)`"), "\(op.rawValue)") }
    }
}

/// wearfleetctl's command lines, parsed from the declarations.
@Suite struct CommandLineParsingTests {
    private func parse(_ op: CommandName, _ words: [String]) throws(CommandRejection) -> CommandLineRequest {
        try op.declaration.parseCommandLine(words)
    }

    @Test func positionalArgumentsOptionsFlagsAndTheCommonOnes() throws {
        let request = try parse(.write, ["AA:BB:CC:00:00:01", "2a39", "0102", "--qos", "control", "--replace", "--json", "--bus=unix:path=/x"])
        guard case .run(let command, let words, let json, let bus) = request else { Issue.record("not a run: \(request)"); return }
        #expect(command.given == [
            "address": .address(BluetoothAddress("AA:BB:CC:00:00:01")!), "uuid": .uuid("2a39"), "value": .bytes([1, 2]),
            "qos": .word("control"), "replace": .bool(true),
        ])
        #expect(words["address"] == "AA:BB:CC:00:00:01" && json && bus == "unix:path=/x")
    }

    @Test func todaysFlagsStay() throws {
        guard case .run(let pin, _, _, _) = try parse(.pin, ["AA:BB:CC:00:00:01", "--random", "--class", "strap", "--priority", "3"]) else {
            Issue.record("not a run")
            return
        }
        #expect(pin.addressType("address_type") == .random && pin.string("class") == "strap" && pin.integer("priority") == 3)
        guard case .run(let write, _, _, _) = try parse(.write, ["AA:BB:CC:00:00:01", "2a39", "03", "--without-response"]) else {
            Issue.record("not a run")
            return
        }
        #expect(write.word("mode") == "command")
        #expect(try parse(.unpin, ["--help"]) == .help)
    }

    @Test func badCommandLinesNameWhatIsWrong() {
        func message(_ op: CommandName, _ words: [String]) -> String? {
            do {
                _ = try parse(op, words)
                return nil
            } catch {
                return error.commandLineDescription
            }
        }
        #expect(message(.unpin, ["AA:BB:CC:00:00:01", "--force"]) == "unknown option '--force'")
        #expect(message(.unpin, ["AA:BB:CC:00:00:01", "extra"]) == "unexpected argument 'extra'")
        #expect(message(.pin, ["AA:BB:CC:00:00:01", "--class"]) == "--class needs a value")
        #expect(message(.read, ["AA:BB:CC:00:00:01"]) == "read needs uuid")
        #expect(message(.read, ["AA:BB:CC:00:00:01", "heart"])
            == "invalid uuid 'heart': expected a Bluetooth UUID (2a37, or the 32- or 128-bit form)")
    }

    @Test func usageAndHelpComeFromTheDeclaration() {
        #expect(CommandName.write.declaration.commandLineUsage
            == "write ADDRESS UUID HEX [--mode request|command|auto] [--qos control|normal|bulk] [--replace] [--without-response] [--json] [--bus ADDRESS]")
        let help = CommandName.pin.declaration.commandLineHelp
        #expect(help.hasPrefix("OVERVIEW: Pin a device at run time"))
        #expect(help.contains("--priority N") && help.contains("(default: 0)") && help.contains("--random"))
    }
}
