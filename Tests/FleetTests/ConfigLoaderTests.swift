import Foundation
import FleetCore
import GATT
import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

@Suite struct ConfigLoaderTests {
    /// Writes `files` (relative path → text) into a fresh directory and runs `body` with it.
    func withFiles(_ files: [String: String], _ body: (URL) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (path, text) in files {
            let url = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try body(directory)
    }

    func load(_ directory: URL, missingMainFile: ConfigurationLoader.MissingMainFile = .error) -> Result<WearfleetConfiguration, ConfigurationErrors> {
        ConfigurationLoader.load(
            mainFile: directory.appendingPathComponent("wearfleetd.toml").path,
            dropInDirectory: directory.appendingPathComponent("wearfleetd.d").path,
            missingMainFile: missingMainFile
        )
    }

    // MARK: - Drop-ins

    @Test func dropInsOverrideScalarsInNameOrderAndKeepTheRest() throws {
        try withFiles([
            "wearfleetd.toml": "[fleet]\nmax_connections = 4\nmin_rssi = -70\nscan_services = [\"180D\", \"180F\"]\n",
            "wearfleetd.d/20-late.toml": "[fleet]\nmax_connections = 6\n",
            "wearfleetd.d/10-early.toml": "[fleet]\nmax_connections = 5\nscan_services = [\"1816\"]\n",
            "wearfleetd.d/README": "not toml, ignored",
            "wearfleetd.d/.hidden.toml": "garbage = = =",
        ]) { directory in
            let configuration = try load(directory).get()
            #expect(configuration.fleet.maxConnections == 6)
            #expect(configuration.fleet.minimumRSSI == -70)
            // Lists are replaced whole, never merged element by element.
            #expect(configuration.fleet.scanServices == [BluetoothUUID(0x1816)])
            #expect(configuration.sources.map { URL(fileURLWithPath: $0).lastPathComponent }
                == ["wearfleetd.toml", "10-early.toml", "20-late.toml"])
        }
    }

    @Test func pinnedEntriesAccumulateAndALaterFileReplacesARepinnedAddress() throws {
        try withFiles([
            "wearfleetd.toml": """
                [[pinned]]
                address = "AA:BB:CC:00:00:01"
                name = "one"
                [[pinned]]
                address = "AA:BB:CC:00:00:02"
                [classes.hr]
                """,
            "wearfleetd.d/50-more.toml": """
                [[pinned]]
                address = "AA:BB:CC:00:00:03"
                [[pinned]]
                address = "aa:bb:cc:00:00:01"
                name = "one again"
                class = "hr"
                """,
        ]) { directory in
            let configuration = try load(directory).get()
            #expect(configuration.pinned.map(\.id.address.description) == ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02", "AA:BB:CC:00:00:03"])
            #expect(configuration.pinned[0].name == "one again")
            #expect(configuration.pinned[0].className == "hr")
            #expect(configuration.pinned[0].definedAt.line == 3)
            #expect(configuration.pinned[0].definedAt.file.hasSuffix("50-more.toml"))
        }
    }

    @Test func errorsNameTheFileAndLineTheyAreIn() throws {
        try withFiles([
            "wearfleetd.toml": "[fleet]\nmax_connections = 4\n",
            "wearfleetd.d/10-a.toml": "\n[fleet]\nslots_per_adapter = \"many\"\n",
            "wearfleetd.d/20-b.toml": "[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\nclass = \"missing\"\n",
        ]) { directory in
            let errors = try #require(load(directory).failureValue).errors.map(\.description)
            let dropIns = directory.appendingPathComponent("wearfleetd.d").path
            #expect(errors == [
                "\(dropIns)/10-a.toml:3: 'slots_per_adapter' in [fleet] must be an integer, found a string",
                "\(dropIns)/20-b.toml:3: [[pinned]] AA:BB:CC:00:00:01: class 'missing' is not defined (defined: default)",
            ])
        }
    }

    @Test func syntaxErrorsOfEveryFileAreReported() throws {
        try withFiles([
            "wearfleetd.toml": "[fleet\n",
            "wearfleetd.d/a.toml": "x = \n",
            "wearfleetd.d/b.toml": "[fleet]\nmax_connections = 2\n",
        ]) { directory in
            let errors = try #require(load(directory).failureValue).errors
            #expect(errors.map { "\($0.line ?? 0):\($0.column ?? 0)" } == ["1:7", "1:5"])
        }
    }

    @Test func aClassDefinedInADropInMayBeUsedByTheMainFile() throws {
        try withFiles([
            "wearfleetd.toml": "[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\nclass = \"band\"\n",
            "wearfleetd.d/classes.toml": "[classes.band]\nfd_path = true\n",
        ]) { directory in
            let configuration = try load(directory).get()
            #expect(configuration.deviceClass(for: configuration.pinned[0]).fileDescriptorPath)
        }
    }

    // MARK: - Missing and unreadable files

    @Test func aMissingMainFileIsAnErrorUnlessDefaultsAreAccepted() throws {
        try withFiles([:]) { directory in
            let path = directory.appendingPathComponent("wearfleetd.toml").path
            let errors = try #require(load(directory).failureValue).errors.map(\.description)
            #expect(errors == ["\(path): cannot read the configuration: no such file"])
            let configuration = try load(directory, missingMainFile: .useDefaults).get()
            #expect(configuration.pinned.isEmpty)
            #expect(configuration.sources.isEmpty)
        }
    }

    @Test func aMissingDropInDirectoryIsFine() throws {
        try withFiles(["wearfleetd.toml": "[fleet]\nmax_connections = 3\n"]) { directory in
            let configuration = try load(directory).get()
            #expect(configuration.fleet.maxConnections == 3)
        }
    }

    @Test func anUnreadableFileIsAnErrorNamingIt() throws {
        try withFiles(["wearfleetd.toml": "", "wearfleetd.d/bad.toml/keep": ""]) { directory in
            let path = directory.appendingPathComponent("wearfleetd.d/bad.toml").path
            let errors = try #require(load(directory).failureValue).errors.map(\.description)
            #expect(errors == ["\(path): cannot read the configuration: it is a directory"])
        }
        try withFiles(["wearfleetd.toml": "", "wearfleetd.d/latin1.toml": ""]) { directory in
            let path = directory.appendingPathComponent("wearfleetd.d/latin1.toml")
            try Data([0x23, 0x20, 0xE9, 0x0A]).write(to: path)
            let errors = try #require(load(directory).failureValue).errors.map(\.description)
            #expect(errors == ["\(path.path):1:3: not valid UTF-8 (byte 0xE9): a character cut short"])
        }
    }

    /// Root reads every file whatever its mode, so this only means something for other users.
    @Test(.enabled(if: getuid() != 0)) func aFileWithoutReadPermissionIsAnErrorNamingIt() throws {
        try withFiles(["wearfleetd.toml": "[fleet]\n"]) { directory in
            let path = directory.appendingPathComponent("wearfleetd.toml").path
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path) }
            let errors = try #require(load(directory).failureValue).errors.map(\.description)
            #expect(errors == ["\(path): cannot read the configuration (permission denied?)"])
        }
    }

    // MARK: - Defaults and mapping to FleetCore

    @Test func anEmptyConfigurationIsTheDefaults() throws {
        let configuration = try #require(validConfiguration(""))
        var expected = WearfleetConfiguration()
        expected.sources = ["main.toml"]
        #expect(configuration == expected)
        #expect(configuration.daemon.disconnectOnStop)
        #expect(configuration.daemon.stateDebounce == .seconds(2))
        #expect(configuration.fleet.maxConnections == 8)
        #expect(configuration.pool.enabled)
        #expect(configuration.metrics.listen == "127.0.0.1:9468")
        #expect(configuration.poolConfiguration == PoolConfiguration(maxConnections: 8))
        #expect(configuration.reconnectPolicy == ReconnectPolicy())
        #expect(configuration.stateMachineConfigurations == ["default": DeviceStateMachine.Configuration()])
        #expect(configuration.deviceClass(named: "default").outgoingConfiguration == OutgoingConfiguration())
        #expect(
            configuration.deviceClass(named: "default").outgoingDeviceOptions
                == OutgoingDeviceOptions(queueCapacities: [.control: 16, .normal: 64, .bulk: 256], maxInFlightWithResponse: 1))
    }

    @Test func mapsSectionsOntoFleetCoreInputs() throws {
        let configuration = try #require(validConfiguration("""
            [fleet]
            max_connections = 3
            slots_per_adapter = 2
            adapter_slots = { hci1 = 4 }
            attempt_burst = 2
            attempt_interval = "1s"
            [pool]
            min_dwell = "2m"
            score_margin = 3
            priority_weight = 2.5
            [reconnect]
            base = "500ms"
            cap = "30s"
            budgets = { transient = 3, protocol = 4, busy = "unlimited" }
            give_up = []
            breaker = { threshold = 5 }
            [classes.hr]
            read = ["2A19"]
            subscribe = ["0x2A37"]
            required_services = ["180D"]
            fd_path = true
            queue_depth = { bulk = 8 }
            coalescing_window = "100ms"
            timeouts = { connect = "20s" }
            """))
        let pool = configuration.poolConfiguration
        #expect(pool.maxConnections == 3)
        #expect(pool.slots(for: AdapterID("hci0")) == 2)
        #expect(pool.slots(for: AdapterID("hci1")) == 4)
        #expect(pool.minimumDwell == .seconds(120))
        #expect(pool.scoreMargin == 3)
        #expect(pool.weights.priority == 2.5)
        #expect(pool.attemptRateLimit == AttemptRateLimit(burst: 2, refillInterval: .seconds(1)))
        let reconnect = configuration.reconnectPolicy
        #expect(reconnect.baseDelay == .milliseconds(500))
        #expect(reconnect.maxDelay == .seconds(30))
        #expect(reconnect.budgets[.transient] == 3)
        #expect(reconnect.budgets[.protocol] == 4)
        #expect(reconnect.budgets[.busy] == nil)
        #expect(reconnect.budgets[.gone] == 6)
        #expect(reconnect.giveUpClasses.isEmpty)
        #expect(reconnect.breakerThreshold == 5)
        let hr = configuration.deviceClass(named: "hr")
        let machine = hr.stateMachineConfiguration
        #expect(machine.readOnConnect == ["00002a19-0000-1000-8000-00805f9b34fb"])
        #expect(machine.subscriptions == ["00002a37-0000-1000-8000-00805f9b34fb"])
        #expect(machine.requiredServices == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(machine.useFileDescriptorPath)
        #expect(machine.timeouts.connect == .seconds(20))
        #expect(machine.timeouts.resolve == .seconds(30))
        let outgoing = hr.outgoingConfiguration
        #expect(outgoing.maxInFlightWithResponse == 1, "writes with response go one at a time")
        #expect(outgoing.bulkQueueCapacity == 8)
        #expect(outgoing.controlQueueCapacity == 16)
        #expect(hr.outgoingDeviceOptions.coalescingWindow == .milliseconds(100))
    }

    @Test func poolEligibilityAndRules() throws {
        let configuration = try #require(validConfiguration("""
            [pool]
            name_prefixes = ["HRM"]
            min_rssi = -75
            [[pool.rules]]
            name_prefix = "HRM-X"
            priority = 90
            class = "fast"
            [[pool.rules]]
            service = "180D"
            priority = 40
            [classes.fast]
            """))
        // What the runtime admits with: `[pool] min_rssi` (-75) over the fleet's floor.
        let pool = configuration.pool.admission(fleetMinimumRSSI: -90)
        #expect(pool.isEligible(name: "HRM-1", services: [], rssi: -70))
        #expect(!pool.isEligible(name: "Watch", services: [], rssi: -70))
        #expect(!pool.isEligible(name: "HRM-1", services: [], rssi: -80))
        #expect(pool.classify(name: "HRM-X2", services: []) == (90, "fast"))
        #expect(pool.classify(name: "HRM-2", services: [BluetoothUUID(0x180D)]) == (40, "default"))
        #expect(pool.classify(name: "HRM-2", services: []) == (0, "default"))
    }

    // MARK: - The shipped example

    var exampleFile: String { repositoryRoot.appendingPathComponent("config/wearfleetd.toml").path }

    @Test func theExampleFileIsValid() throws {
        let result = ConfigurationLoader.load(mainFile: exampleFile, dropInDirectory: nil)
        if case .failure(let errors) = result { Issue.record("example invalid:\n\(errors)") }
        let configuration = try result.get()
        #expect(configuration.pinned.map(\.id.address.description) == (1...4).map { "AA:BB:CC:00:00:0\($0)" })
        let heartRate = configuration.deviceClass(named: "heart-rate")
        #expect(heartRate.subscribe == [BluetoothUUID(0x2A37)])
        #expect(heartRate.read == [BluetoothUUID(0x2A19)])
        let band = configuration.deviceClass(named: "band")
        #expect(band.fileDescriptorPath)
        #expect(band.subscribe.first?.uuid16 == nil)
        #expect(configuration.pinned.map(\.className) == ["heart-rate", "heart-rate", "band", "thermometer"])
        // The example says "the value shown is the default" unless a comment says otherwise.
        #expect(configuration.daemon == DaemonSettings())
        #expect(configuration.reconnectPolicy == ReconnectPolicy())
        #expect(configuration.metrics == MetricsSettings())
        #expect(band.queueDepth == DeviceClassSettings(name: "x").queueDepth)
        #expect(band.timeouts == DeviceStateMachine.Timeouts())
        #expect(configuration.poolConfiguration.minimumDwell == PoolConfiguration(maxConnections: 0).minimumDwell)
        #expect(configuration.pool.weights == PoolScoreWeights())
        #expect(configuration.cluster == ClusterSettings())
    }

    /// Every key the decoder accepts appears in the example, so the example documents them all.
    @Test func theExampleSetsEveryKey() throws {
        let text = try String(contentsOfFile: exampleFile, encoding: .utf8)
        let document = try TOMLParser.parse(text, file: "example")
        var written: Set<String> = []
        func collect(_ table: TOMLTable, _ prefix: String) {
            for entry in table.entries {
                let path = prefix.isEmpty ? entry.key : prefix + "." + entry.key
                written.insert(path)
                switch entry.value {
                case .table(let sub): collect(sub, path)
                case .array(let elements):
                    for case .table(let sub) in elements.map(\.value) { collect(sub, path) }
                default: break
                }
            }
        }
        collect(document, "")
        let expected = ConfigurationSchema.sections
            + ConfigurationSchema.daemon.map { "daemon." + $0 }
            + ConfigurationSchema.fleet.map { "fleet." + $0 }
            + ConfigurationSchema.pinned.map { "pinned." + $0 }
            + ConfigurationSchema.pool.map { "pool." + $0 }
            + ConfigurationSchema.poolRule.map { "pool.rules." + $0 }
            + ConfigurationSchema.reconnect.map { "reconnect." + $0 }
            + ConfigurationDecoder.budgetKeys.map { "reconnect.budgets." + $0.key }
            + ConfigurationSchema.breaker.map { "reconnect.breaker." + $0 }
            + ConfigurationSchema.deviceClass.map { "classes.band." + $0 }
            + ConfigurationDecoder.qosNames.map { "classes.band.queue_depth." + $0 }
            + ConfigurationSchema.timeouts.map { "classes.band.timeouts." + $0 }
            + ConfigurationSchema.metrics.map { "metrics." + $0 }
            + ConfigurationSchema.mqtt.map { "mqtt." + $0 }
            + ConfigurationSchema.cluster.map { "cluster." + $0 }
        #expect(Set(expected).subtracting(written).sorted() == [])
    }

    // MARK: - --check-config

    @Test func checkConfigOnTheExample() {
        let (status, output) = ConfigurationCheck.run(configPath: exampleFile)
        #expect(status == 0)
        #expect(output == "\(exampleFile): OK: 4 pinned devices, 5 classes, pool on, max 8 connections")
    }

    @Test func checkConfigPrintsEveryErrorAndExits78() throws {
        try withFiles([
            "wearfleetd.toml": "[fleet]\nmax_conections = 3\n",
            "wearfleetd.d/x.toml": "[[pinned]]\naddress = \"nope\"\n",
        ]) { directory in
            let main = directory.appendingPathComponent("wearfleetd.toml").path
            let (status, output) = ConfigurationCheck.run(configPath: main)
            #expect(status == 78)
            #expect(output == """
                \(main):2: unknown key 'max_conections' in [fleet] (did you mean 'max_connections'?)
                \(directory.path)/wearfleetd.d/x.toml:2: 'address' in [[pinned]]: 'nope' is not a Bluetooth address (expected six hex pairs such as AA:BB:CC:DD:EE:FF)
                """)
        }
    }

    @Test func checkConfigOnAMissingFile() throws {
        try withFiles([:]) { directory in
            let main = directory.appendingPathComponent("nothing.toml").path
            let (status, output) = ConfigurationCheck.run(configPath: main)
            #expect(status == 78)
            #expect(output == "\(main): cannot read the configuration: no such file")
        }
    }

    @Test func dropInDirectoryFollowsTheMainFile() {
        #expect(ConfigurationLoader.dropInDirectory(forMainFile: "/etc/wearfleet/wearfleetd.toml") == "/etc/wearfleet/wearfleetd.d")
        #expect(ConfigurationLoader.dropInDirectory(forMainFile: ConfigurationLoader.defaultMainFile) == ConfigurationLoader.defaultDropInDirectory)
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
