import FleetCore
import Testing
@testable import FleetConfiguration

/// `[cluster]` and `[[pinned]] preferred_gateways`: what they decode to, every error with the
/// exact `file:line: message` an operator sees, and the `OwnershipConfiguration` they give.
@Suite struct ConfigClusterTests {
    /// `[mqtt]` on, which `[cluster] enabled = true` needs.
    static let broker = "[mqtt]\nenabled = true\n"

    static func device(_ address: String, _ type: AddressType = .public) throws -> DeviceID {
        DeviceID(address: try #require(BluetoothAddress(address)), addressType: type)
    }

    // MARK: - Defaults

    @Test func offByDefaultWithTheOwnershipMachinesDefaults() throws {
        let configuration = try #require(validConfiguration(""))
        let cluster = configuration.cluster
        #expect(!cluster.enabled)
        #expect(cluster.lease == .seconds(15) && cluster.renewal == .seconds(5) && cluster.settle == .seconds(1))
        #expect(cluster.margin == 8 && cluster.dwell == .seconds(30))
        #expect(configuration.ownershipConfiguration == OwnershipConfiguration())
    }

    @Test func pinsWithoutPreferredGatewaysLeaveTheDefaults() throws {
        let configuration = try #require(validConfiguration("""
            [cluster]
            enabled = false
            [[pinned]]
            address = "AA:BB:CC:00:00:01"
            """))
        #expect(configuration.pinned.first?.preferredGateways == [])
        #expect(configuration.ownershipConfiguration == OwnershipConfiguration())
        #expect(configuration.ownershipConfiguration.preferredGateways.isEmpty)
    }

    // MARK: - Keys

    @Test func everyKeyIsApplied() throws {
        let cluster = try #require(validConfiguration(Self.broker + """
            [cluster]
            enabled = true
            lease = "20s"
            renewal = "4s"
            settle = "500ms"
            bid_margin = 6.5
            dwell = "1m30s"
            """)).cluster
        #expect(cluster.enabled)
        #expect(cluster.lease == .seconds(20))
        #expect(cluster.renewal == .seconds(4))
        #expect(cluster.settle == .milliseconds(500))
        #expect(cluster.margin == 6.5)
        #expect(cluster.dwell == .seconds(90))
    }

    @Test func boundaryValuesAreAccepted() throws {
        // A lease of exactly two renewals, the shortest settle, no dwell, no margin, an integer margin.
        let cluster = try #require(validConfiguration("""
            [cluster]
            lease = "10s"
            renewal = "5s"
            settle = "1ms"
            dwell = "0s"
            bid_margin = 0
            """)).cluster
        #expect(cluster.lease == .seconds(10) && cluster.renewal == .seconds(5))
        #expect(cluster.settle == .milliseconds(1) && cluster.dwell == .zero && cluster.margin == 0)
        #expect(try #require(validConfiguration("[cluster]\nbid_margin = 12")).cluster.margin == 12)
    }

    @Test(arguments: [
        ("lease = \"8s\"",
         "main.toml:2: 'lease' in [cluster] (8s) must be at least two renewals, 2 × 5s = 10s: one lost heartbeat must not hand this gateway's devices to another"),
        ("renewal = \"3s\"\nlease = \"5s\"",
         "main.toml:3: 'lease' in [cluster] (5s) must be at least two renewals, 2 × 3s = 6s: one lost heartbeat must not hand this gateway's devices to another"),
        ("renewal = \"10s\"",
         "main.toml:2: 'renewal' in [cluster] (10s) must be at most half of 'lease' (15s): the lease must be at least two renewals, 2 × 10s = 20s"),
        ("renewal = \"0s\"",
         "main.toml:2: 'renewal' in [cluster] must be at least 1ms, found \"0s\""),
        ("lease = \"0s\"",
         "main.toml:2: 'lease' in [cluster] must be at least 1ms, found \"0s\""),
        ("settle = \"0s\"",
         "main.toml:2: 'settle' in [cluster] must be at least 1ms, found \"0s\""),
        ("settle = \"15s\"",
         "main.toml:2: 'settle' in [cluster] (15s) must be shorter than 'lease' (15s): settle covers a claim's round trip through the broker, the lease several heartbeats"),
        ("lease = \"800ms\"\nrenewal = \"400ms\"",
         "main.toml:2: 'lease' in [cluster] (800ms) must be longer than 'settle' (1s): settle covers a claim's round trip through the broker, the lease several heartbeats"),
        ("settle = \"1 s\"",
         "main.toml:2: 'settle' in [cluster]: '1 s' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most 1 week)"),
        ("dwell = \"-1s\"",
         "main.toml:2: 'dwell' in [cluster]: '-1s' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most 1 week)"),
        ("dwell = 30",
         "main.toml:2: 'dwell' in [cluster] must be a duration such as \"250ms\", \"2s\" or \"5m\", found an integer"),
        ("bid_margin = -1",
         "main.toml:2: 'bid_margin' in [cluster] must be between 0.0 and 1000000.0, found -1.0"),
        ("bid_margin = inf",
         "main.toml:2: 'bid_margin' in [cluster] must be between 0.0 and 1000000.0, found inf"),
        ("bid_margin = nan",
         "main.toml:2: 'bid_margin' in [cluster] must be between 0.0 and 1000000.0, found nan"),
        ("bid_margin = \"8\"",
         "main.toml:2: 'bid_margin' in [cluster] must be a number, found a string"),
        ("enabled = \"yes\"",
         "main.toml:2: 'enabled' in [cluster] must be a boolean (true or false), found a string"),
        ("leese = \"15s\"",
         "main.toml:2: unknown key 'leese' in [cluster] (did you mean 'lease'?)"),
        ("gateway_id = \"gw-a\"",
         "main.toml:2: unknown key 'gateway_id' in [cluster] (it belongs in [mqtt])"),
        ("preferred_gateways = [\"gw-a\"]",
         "main.toml:2: unknown key 'preferred_gateways' in [cluster] (it belongs in [[pinned]])"),
    ])
    func reports(_ body: String, _ expected: String) {
        #expect(configurationErrors("[cluster]\n" + body) == [expected])
    }

    /// An invalid duration is reported once: the lease check does not also compare against it.
    @Test func anInvalidDurationIsNotComparedAgain() {
        #expect(configurationErrors("[cluster]\nrenewal = \"x\"\nlease = \"1s\"") == [
            "main.toml:2: 'renewal' in [cluster]: 'x' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most 1 week)",
        ])
    }

    @Test func aSectionThatIsNotATableIsReported() {
        #expect(configurationErrors("cluster = true") == ["main.toml:1: 'cluster' in the top level must be a table, found a boolean"])
    }

    @Test func anUnknownSectionNamesCluster() {
        #expect(configurationErrors("[clustr]\nenabled = true") == ["main.toml:1: unknown section [clustr] (did you mean [cluster]?)"])
    }

    // MARK: - The broker

    @Test func enabledNeedsMQTT() {
        let expected = "main.toml:3: 'enabled' in [cluster] needs [mqtt] enabled = true: the gateways agree through the broker which of them connects each device"
        #expect(configurationErrors("[cluster]\nlease = \"20s\"\nenabled = true") == [expected])
        #expect(configurationErrors("[mqtt]\nenabled = false\n[cluster]\nenabled = true") == [
            "main.toml:4: 'enabled' in [cluster] needs [mqtt] enabled = true: the gateways agree through the broker which of them connects each device",
        ])
        #expect(validConfiguration(Self.broker + "[cluster]\nenabled = true")?.cluster.enabled == true)
        #expect(validConfiguration("[cluster]\nenabled = false")?.cluster.enabled == false, "off needs no broker")
    }

    /// `[mqtt] enabled` of the wrong type is one error, not also a cluster without its broker.
    @Test func anInvalidMQTTEnabledIsReportedOnce() {
        #expect(configurationErrors("[mqtt]\nenabled = 1\n[cluster]\nenabled = true") == [
            "main.toml:2: 'enabled' in [mqtt] must be a boolean (true or false), found an integer",
        ])
        #expect(configurationErrors("mqtt = 1\n[cluster]\nenabled = true") == [
            "main.toml:1: 'mqtt' in the top level must be a table, found an integer",
        ])
    }

    /// Drop-ins merge before decoding: the broker may be turned on in one file and the cluster in
    /// another, and a later file turning the broker off is reported at the cluster's line.
    @Test func theBrokerMayBeEnabledInAnotherFile() throws {
        let main = ConfigurationSource(file: "main.toml", text: Self.broker)
        let cluster = ConfigurationSource(file: "50-cluster.toml", text: "[cluster]\nenabled = true\n")
        let enabled = try ConfigurationLoader.decode([main, cluster]).get()
        #expect(enabled.cluster.enabled && enabled.mqtt.enabled)

        let brokerOff = ConfigurationSource(file: "90-off.toml", text: "[mqtt]\nenabled = false\n")
        let errors = try #require(ConfigurationLoader.decode([main, cluster, brokerOff]).failureValue).errors.map(\.description)
        #expect(errors == [
            "50-cluster.toml:2: 'enabled' in [cluster] needs [mqtt] enabled = true: the gateways agree through the broker which of them connects each device",
        ])
    }

    // MARK: - preferred_gateways

    @Test func preferredGatewaysAreStoredOnThePin() throws {
        let configuration = try #require(validConfiguration("""
            [[pinned]]
            address = "AA:BB:CC:00:00:01"
            preferred_gateways = ["ward-3", "gw_b.2", "Gateway-A"]
            [[pinned]]
            address = "AA:BB:CC:00:00:02"
            preferred_gateways = []
            """))
        #expect(configuration.pinned.map(\.preferredGateways) == [
            [GatewayID("ward-3"), GatewayID("gw_b.2"), GatewayID("Gateway-A")], [],
        ])
    }

    @Test(arguments: [
        ("[\n  \"gw-a\",\n  \"ward/3\",\n]",
         "main.toml:5: 'preferred_gateways' in [[pinned]]: \"ward/3\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')"),
        ("[\"gw+\"]",
         "main.toml:3: 'preferred_gateways' in [[pinned]]: \"gw+\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')"),
        ("[\"#\"]",
         "main.toml:3: 'preferred_gateways' in [[pinned]]: \"#\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')"),
        ("[\"\"]",
         "main.toml:3: 'preferred_gateways' in [[pinned]]: \"\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')"),
        ("[\"$SYS\"]",
         "main.toml:3: 'preferred_gateways' in [[pinned]]: \"$SYS\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')"),
        ("[\n  \"gw-a\",\n  \"gw-b\",\n  \"gw-a\",\n]",
         "main.toml:6: 'preferred_gateways' in [[pinned]] lists \"gw-a\" twice"),
        ("[\"gw-a\", 2]",
         "main.toml:3: 'preferred_gateways' in [[pinned]] must hold strings, found an integer"),
        ("\"gw-a\"",
         "main.toml:3: 'preferred_gateways' in [[pinned]] must be an array, found a string"),
    ])
    func reportsABadPreferredGateway(_ value: String, _ expected: String) {
        let text = "[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\npreferred_gateways = \(value)"
        #expect(configurationErrors(text) == [expected])
    }

    /// A gateway id `[mqtt] gateway_id` refuses is refused in `preferred_gateways` too, and the
    /// reverse: the two must name gateways the same way, or a preference could never match.
    @Test(arguments: ["gw-a", "ward 3", "a/b", "x+", "#", "$SYS", "\u{0}"])
    func gatewayIDsFollowOneRule(_ name: String) {
        let escaped = name == "\u{0}" ? "\\u0000" : name
        let asGateway = configurationErrors("[mqtt]\ngateway_id = \"\(escaped)\"").isEmpty
        let asPreference = configurationErrors(
            "[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\npreferred_gateways = [\"\(escaped)\"]").isEmpty
        #expect(asGateway == asPreference)
        #expect(asGateway == ConfigurationDecoder.isGatewayID(name))
    }

    /// A drop-in that pins an address again replaces the whole entry, preferences included.
    @Test func aRepinnedDeviceTakesTheLaterFilesPreferences() throws {
        let main = ConfigurationSource(file: "main.toml", text: """
            [[pinned]]
            address = "AA:BB:CC:00:00:01"
            preferred_gateways = ["gw-a"]
            """)
        let dropIn = ConfigurationSource(file: "50-ward.toml", text: """
            [[pinned]]
            address = "AA:BB:CC:00:00:01"
            preferred_gateways = ["gw-b", "gw-c"]
            """)
        let configuration = try ConfigurationLoader.decode([main, dropIn]).get()
        #expect(configuration.pinned.map(\.preferredGateways) == [[GatewayID("gw-b"), GatewayID("gw-c")]])
    }

    // MARK: - Conversion

    @Test func mapsOntoTheOwnershipMachinesConfiguration() throws {
        let configuration = try #require(validConfiguration(Self.broker + """
            [cluster]
            enabled = true
            lease = "20s"
            renewal = "4s"
            settle = "500ms"
            bid_margin = 6.5
            dwell = "45s"
            [[pinned]]
            address = "AA:BB:CC:00:00:01"
            address_type = "random"
            preferred_gateways = ["ward-3", "ward-4"]
            [[pinned]]
            address = "AA:BB:CC:00:00:02"
            [[pinned]]
            address = "AA:BB:CC:00:00:03"
            preferred_gateways = ["ward-4"]
            """))
        let band = try Self.device("AA:BB:CC:00:00:01", .random)
        let cuff = try Self.device("AA:BB:CC:00:00:03")
        let ownership = configuration.ownershipConfiguration
        #expect(ownership == OwnershipConfiguration(
            lease: .seconds(20), renewal: .seconds(4), settle: .milliseconds(500), margin: 6.5, dwell: .seconds(45),
            preferredGateways: [band: [GatewayID("ward-3"), GatewayID("ward-4")], cuff: [GatewayID("ward-4")]]))
        // What the file does not set is the machine's default, the grace following the lease.
        let defaults = OwnershipConfiguration()
        #expect(ownership.resyncGrace == .seconds(24))
        #expect(ownership.bidInterval == defaults.bidInterval && ownership.hysteresis == defaults.hysteresis)
        #expect(ownership.scoring == defaults.scoring)
        // The random-address pin is keyed with its address type; the public twin is not the same device.
        #expect(ownership.preferredGateways[try Self.device("AA:BB:CC:00:00:01")] == nil)
        #expect(ownership.preferredGateways[try Self.device("AA:BB:CC:00:00:02")] == nil)
    }

    /// The numbers reach the machine unclamped: validation, not `OwnershipConfiguration.init`,
    /// is what keeps them consistent.
    @Test func validatedNumbersReachTheMachineUnchanged() throws {
        let configuration = try #require(validConfiguration("[cluster]\nlease = \"2s\"\nrenewal = \"1s\"\nsettle = \"1999ms\""))
        let ownership = configuration.ownershipConfiguration
        #expect(ownership.lease == .seconds(2) && ownership.renewal == .seconds(1) && ownership.settle == .milliseconds(1999))
    }
}
