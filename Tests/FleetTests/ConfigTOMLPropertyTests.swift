import PropertyBased
import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

/// The parser and the decoder face whatever an operator (or an editor crash) leaves in a file;
/// a reload must report it, never trap.
@Suite struct ConfigTOMLPropertyTests {
    /// Characters that TOML gives meaning to, plus some that it forbids, so that random strings
    /// reach deep into the grammar instead of failing on the first byte.
    static let alphabet: [String] = "[]{}=.,\"'#\\ \t\n\r_-+:0123456789abefilnrtuxoABEFUsz\u{0}\u{7F}é😀".unicodeScalars.map { String($0) }
        + ["\r\n", "\"\"\"", "'''", "[[", "]]"]

    static let fragments: [String] = [
        "[fleet]\n", "[[pinned]]\n", "address = \"AA:BB:CC:00:00:01\"\n", "max_connections = 3\n",
        "[classes.x]\n", "subscribe = [\"2A37\"]\n", "a.b = 1\n", "x = { y = [1, {z = 2}] }\n",
        "s = \"\"\"\nline\\\n  more\"\"\"\n", "= ", "\"\\u", "0x", "1e", "[a.b]\n", "inf", "\n", "#",
    ]

    @Test func arbitraryTextNeverTraps() async {
        let text = Gen<String?>.element(of: Self.alphabet).map { $0 ?? "" }.array(of: 0...200).map { $0.joined() }
        await propertyCheck(count: 2000, input: text) { text in
            _ = try? TOMLParser.parse(text, file: "fuzz.toml")
            _ = decodeConfiguration(text)
        }
    }

    @Test func arbitraryFragmentsNeverTrap() async {
        let text = Gen<String?>.element(of: Self.fragments + Self.alphabet).map { $0 ?? "" }.array(of: 0...60).map { $0.joined() }
        await propertyCheck(count: 2000, input: text) { text in
            _ = try? TOMLParser.parse(text, file: "fuzz.toml")
            _ = decodeConfiguration(text)
        }
    }

    @Test func arbitraryUnicodeNeverTraps() async {
        let text = Gen.unicodeScalar(in: "\u{0}"..."\u{D7FF}").array(of: 0...120).map { String(String.UnicodeScalarView($0)) }
        await propertyCheck(count: 1000, input: text) { text in
            _ = try? TOMLParser.parse(text, file: "fuzz.toml")
        }
    }

    @Test func errorsAlwaysPointInsideTheText() async {
        let text = Gen<String?>.element(of: Self.fragments + Self.alphabet).map { $0 ?? "" }.array(of: 0...40).map { $0.joined() }
        await propertyCheck(count: 1000, input: text) { text in
            do {
                _ = try TOMLParser.parse(text, file: "fuzz.toml")
            } catch let error as TOMLSyntaxError {
                let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
                #expect(error.position.line >= 1 && error.position.line <= lines)
                #expect(error.position.column >= 1)
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    static let headers = [
        "[daemon]", "[fleet]", "[[pinned]]", "[pool]", "[[pool.rules]]", "[reconnect]", "[reconnect.budgets]",
        "[reconnect.breaker]", "[classes.a]", "[classes.a.queue_depth]", "[classes.a.timeouts]", "[metrics]", "[fleet.adapter_slots]",
    ]
    static let keys = [
        "address", "class", "priority", "name", "max_connections", "adapters", "scan_services", "min_rssi", "base", "cap",
        "transient", "threshold", "cooldown", "max_cooldown", "read", "subscribe", "control", "connect", "listen",
        "default_class", "service", "name_prefix", "enabled", "give_up", "hci0", "log_level", "heartbeat", "jitter",
    ]
    static let values = [
        "\"AA:BB:CC:00:00:01\"", "\"a\"", "\"default\"", "1", "-1", "0", "99999", "1.5", "true", "\"2s\"", "\"0s\"",
        "\"1h\"", "[\"2A37\"]", "[\"hci0\", \"hci0\"]", "[1, \"x\"]", "{ x = 1 }", "\"127.0.0.1:1\"", "\"unlimited\"",
        "[\"denied\"]", "\"bulk\"", "[]", "\"zz\"",
    ]

    /// Documents that parse, built from the schema's own vocabulary, so the decoder's checks
    /// (types, ranges, cross references, duplicates) all run on odd combinations.
    @Test func schemaShapedDocumentsNeverTrapAndAlwaysLocateTheirErrors() async {
        let line = zip(
            Gen<String?>.element(of: Self.headers).map { $0 ?? "" },
            Gen<String?>.element(of: Self.keys).map { $0 ?? "" },
            Gen<String?>.element(of: Self.values).map { $0 ?? "" },
            Gen.int(in: 0...3)
        ).map { header, key, value, choice in choice == 0 ? header : "\(key) = \(value)" }
        await propertyCheck(count: 2000, input: line.array(of: 0...40).map { $0.joined(separator: "\n") }) { text in
            if case .failure(let errors) = decodeConfiguration(text) {
                #expect(!errors.errors.isEmpty)
                #expect(errors.errors.allSatisfy { $0.file == "main.toml" && ($0.line ?? 0) >= 1 })
            }
        }
    }
}
