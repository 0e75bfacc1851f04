import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

@Suite struct ConfigDurationTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("2s", .seconds(2)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("1h30m", .seconds(5400)), ("1m30s", .seconds(90)), ("1s500ms", .milliseconds(1500)), ("0s", .zero),
        ("168h", .seconds(604_800)),
    ])
    func parses(_ text: String, _ expected: Duration) {
        #expect(ConfigDuration.parse(text) == expected)
    }

    @Test(arguments: ["", "2", "s", "2 s", "1.5s", "-1s", "+1s", "2sec", "30m1h", "1s1s", "169h", "99999999999999h", "2S", "ms"])
    func rejects(_ text: String) {
        #expect(ConfigDuration.parse(text) == nil)
    }

    @Test(arguments: [Duration.milliseconds(250), .seconds(2), .seconds(300), .seconds(5400), .milliseconds(61_001), .zero])
    func formatsWhatItParses(_ duration: Duration) {
        #expect(ConfigDuration.parse(ConfigDuration.format(duration)) == duration)
    }

    @Test func suggestions() {
        #expect(KeySuggestion.closest(to: "max_conections", among: ["max_connections", "min_rssi"]) == "max_connections")
        #expect(KeySuggestion.closest(to: "adpaters", among: ["adapters"]) == "adapters")
        #expect(KeySuggestion.closest(to: "zzz", among: ["adapters"]) == nil)
    }
}
