import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

/// Every kind of semantic error, with the exact `file:line: message` an operator sees.
@Suite struct ConfigSemanticErrorTests {
    @Test(arguments: [
        ("[fleet]\nmax_conections = 3",
         "main.toml:2: unknown key 'max_conections' in [fleet] (did you mean 'max_connections'?)"),
        ("[flet]\nx = 1",
         "main.toml:1: unknown section [flet] (did you mean [fleet]?)"),
        ("verbose = true",
         "main.toml:1: unknown key 'verbose' at the top level"),
        ("[fleet]\nmax_connections = \"8\"",
         "main.toml:2: 'max_connections' in [fleet] must be an integer, found a string"),
        ("[fleet]\n\nmax_connections = 5000",
         "main.toml:3: 'max_connections' in [fleet] must be between 0 and 1000, found 5000"),
        ("[fleet]\nadapters = [\"hci0\", \"bt1\"]",
         "main.toml:2: 'adapters' in [fleet]: 'bt1' is not an adapter name (expected hci0, hci1, …)"),
        ("[fleet]\nadapters = [\"hci0\", \"hci0\"]",
         "main.toml:2: 'adapters' in [fleet] lists hci0 twice"),
        ("[fleet]\nadapters = [\"hci0\"]\nadapter_slots = { hci1 = 2 }",
         "main.toml:3: [fleet.adapter_slots] sets slots for hci1, which is not in 'adapters'"),
        ("[fleet]\nscan_services = [\n  \"180D\",\n  \"18OF\",\n]",
         "main.toml:4: 'scan_services' in [fleet]: '18OF' is not a Bluetooth UUID (write 16-bit \"2A37\" or 128-bit \"6e400003-b5a3-f393-e0a9-e50e24dcca9e\")"),
        ("[fleet]\nscan_services = [\"180D\", 0x180F]",
         "main.toml:2: 'scan_services' in [fleet] must hold strings, found an integer"),
        ("[fleet]\nscan_services = [\"180D\", \"0000180d-0000-1000-8000-00805f9b34fb\"]",
         "main.toml:2: 'scan_services' in [fleet] lists 0x180d twice"),
        ("[fleet]\nattempt_interval = 250",
         "main.toml:2: 'attempt_interval' in [fleet] must be a duration such as \"250ms\", \"2s\" or \"5m\", found an integer"),
        ("[daemon]\nstate_debounce = \"2 s\"",
         "main.toml:2: 'state_debounce' in [daemon]: '2 s' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most 1 week)"),
        ("[daemon]\nlog_level = \"warn\"",
         "main.toml:2: 'log_level' in [daemon]: 'warn' is not a log level (one of trace, debug, info, notice, warning, error, critical)"),
        ("[daemon]\ndisconnect_on_stop = \"yes\"",
         "main.toml:2: 'disconnect_on_stop' in [daemon] must be a boolean (true or false), found a string"),
        ("[[pinned]]\naddress = \"AA:BB:CC:00:00\"",
         "main.toml:2: 'address' in [[pinned]]: 'AA:BB:CC:00:00' is not a Bluetooth address (expected six hex pairs such as AA:BB:CC:DD:EE:FF)"),
        ("\n[[pinned]]\nname = \"x\"",
         "main.toml:2: [[pinned]] entry has no 'address'"),
        ("[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\naddress_type = \"static\"",
         "main.toml:3: 'address_type' in [[pinned]]: 'static' must be \"public\" or \"random\""),
        ("[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\nclass = \"heart_rate\"\n[classes.heart-rate]",
         "main.toml:3: [[pinned]] AA:BB:CC:00:00:01: class 'heart_rate' is not defined (did you mean 'heart-rate'?) (defined: default, heart-rate)"),
        ("[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\n\n[[pinned]]\naddress = \"aa:bb:cc:00:00:01\"",
         "main.toml:5: device AA:BB:CC:00:00:01 is pinned twice (also at main.toml:1)"),
        ("[pinned]\naddress = \"AA:BB:CC:00:00:01\"",
         "main.toml:1: 'pinned' must be an array of tables ([[pinned]]), found a table"),
        ("[pool]\ndefault_class = \"band\"",
         "main.toml:2: 'default_class' in [pool]: class 'band' is not defined (defined: default)"),
        ("[pool]\nscore_margin = -1",
         "main.toml:2: 'score_margin' in [pool] must be between 0.0 and 1000000.0, found -1.0"),
        ("[[pool.rules]]\npriority = 3",
         "main.toml:1: [[pool.rules]] entry must say what it matches: 'name_prefix', 'service' or both"),
        ("[[pool.rules]]\nservice = \"180D\"",
         "main.toml:1: [[pool.rules]] entry must set 'priority', 'class' or both"),
        ("[reconnect]\nbase = \"5s\"\ncap = \"2s\"",
         "main.toml:3: 'cap' in [reconnect] (2s) must not be below 'base' (5s)"),
        ("[reconnect]\njitter = 1.5",
         "main.toml:2: 'jitter' in [reconnect] must be between 0.0 and 1.0, found 1.5"),
        ("[reconnect.budgets]\ntransient = \"many\"",
         "main.toml:2: 'transient' in [reconnect.budgets] must be an integer or \"unlimited\", found a string"),
        ("[reconnect.budgets]\ntransiant = 3",
         "main.toml:2: unknown key 'transiant' in [reconnect.budgets] (did you mean 'transient'?)"),
        ("[reconnect]\ngive_up = [\"denied\", \"gon\"]",
         "main.toml:2: 'give_up' in [reconnect]: 'gon' is not a failure class (one of transient, out_of_slots, bluetooth_off, not_ready, protocol, gone, busy, denied, pairing, unknown) (did you mean 'gone'?)"),
        ("[classes.cuff]\nintermittent = true\nfd_path = true",
         "main.toml:3: 'fd_path' in [classes.cuff]: an intermittent class takes its few measurements over D-Bus (StartNotify); set fd_path = false or intermittent = false"),
        ("[reconnect.breaker]\ncooldown = \"10m\"\nmax_cooldown = \"1m\"",
         "main.toml:3: 'max_cooldown' in [reconnect.breaker] (1m) must not be below 'cooldown' (10m)"),
        ("[classes.band]\nsubscribe = [\"6e400003-b5a3-f393-e0a9-e50e24dcca9\"]",
         "main.toml:2: 'subscribe' in [classes.band]: '6e400003-b5a3-f393-e0a9-e50e24dcca9' is not a Bluetooth UUID (write 16-bit \"2A37\" or 128-bit \"6e400003-b5a3-f393-e0a9-e50e24dcca9e\")"),
        ("[classes.band.queue_depth]\ncontrol = 4\nurgent = 2",
         "main.toml:3: unknown key 'urgent' in [classes.band.queue_depth]"),
        ("[classes.band]\ndefault_qos = \"bulkk\"",
         "main.toml:2: 'default_qos' in [classes.band]: 'bulkk' is not a QoS (one of control, normal, bulk) (did you mean 'bulk'?)"),
        ("[classes.band]\nfd-path = true",
         "main.toml:2: unknown key 'fd-path' in [classes.band] (did you mean 'fd_path'?)"),
        ("[classes]\nband = 1",
         "main.toml:2: 'band' in [classes] must be a table ([classes.band]), found an integer"),
        ("[classes.band]\nmax_in_flight_writes = 2",
         "main.toml:2: 'max_in_flight_writes' was removed: ATT allows one request at a time per link and bluetoothd refuses a "
            + "second pending write on a characteristic (InProgress), so writes with response go one at a time. Delete the line "
            + "(in [classes.band])"),
        ("[classes.band]\nwrite_failure_threshold = 3\nheartbeat = \"30s\"",
         "main.toml:3: 'heartbeat' was removed: a link that stops answering is lost by the controller's supervision timeout, "
            + "which bluetoothd reports as a disconnect; a periodic GATT read only cost the wearable battery. Delete the line "
            + "(in [classes.band])"),
        ("[classes.band.timeouts]\nconnect = \"0s\"",
         "main.toml:2: 'connect' in [classes.band.timeouts] must be at least 1ms, found \"0s\""),
        ("[classes.band.timeouts]\nwrite = \"25s\"",
         "main.toml:2: 'write' in [classes.band.timeouts] must be at most 20s, found 25s: a Write command answers within 24s, "
            + "its queue wait, this timeout and 1s of margin"),
        ("[pool]\nmax_connections = 3",
         "main.toml:2: unknown key 'max_connections' in [pool] (it belongs in [fleet])"),
        ("[[pinned]]\naddress = \"AA:BB:CC:00:00:01\"\nread = [\"2A19\"]",
         "main.toml:3: unknown key 'read' in [[pinned]] (it belongs in [classes.NAME])"),
        ("[metrics]\nlisten = \"localhost\"",
         "main.toml:2: 'listen' in [metrics]: 'localhost' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \"127.0.0.1:+80\"",
         "main.toml:2: 'listen' in [metrics]: '127.0.0.1:+80' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \"127.0.0.1:70000\"",
         "main.toml:2: 'listen' in [metrics]: '127.0.0.1:70000' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \"127.0.0.1:http\"",
         "main.toml:2: 'listen' in [metrics]: '127.0.0.1:http' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \"127.0.0.1:0\"",
         "main.toml:2: 'listen' in [metrics]: '127.0.0.1:0' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \"[::1]\"",
         "main.toml:2: 'listen' in [metrics]: '[::1]' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
        ("[metrics]\nlisten = \" \"",
         "main.toml:2: 'listen' in [metrics]: ' ' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")"),
    ])
    func reports(_ text: String, _ expected: String) {
        #expect(configurationErrors(text) == [expected])
    }

    @Test func reportsEveryErrorInLineOrderNotJustTheFirst() {
        let errors = configurationErrors("""
            [metrics]
            listen = "nowhere"
            [fleet]
            max_connections = -1
            min_rsi = -80
            [[pinned]]
            address = "XX:BB:CC:00:00:01"
            class = "nope"
            """)
        #expect(errors.map { $0.split(separator: ":").prefix(2).joined(separator: ":") }
            == ["main.toml:2", "main.toml:4", "main.toml:5", "main.toml:7", "main.toml:8"])
    }

    @Test func syntaxErrorsCarryTheColumn() {
        #expect(configurationErrors("[fleet]\nmax_connections = 8 9") == ["main.toml:2:21: expected a new line after a value, found '9'"])
    }

    @Test func anEmptyMetricsListenTurnsMetricsOff() throws {
        #expect(validConfiguration("")?.metrics.enabled == true)
        #expect(validConfiguration("[metrics]\nlisten = \"\"")?.metrics.enabled == false)
        #expect(validConfiguration("[metrics]\nenabled = true\nlisten = \"\"")?.metrics.enabled == false, "an empty listen wins")
        #expect(validConfiguration("[metrics]\nenabled = false")?.metrics.enabled == false)
    }

    @Test func ipv6MetricsAddress() throws {
        let configuration = validConfiguration("[metrics]\nlisten = \"[::1]:9100\"")
        #expect(configuration?.metrics.host == "::1")
        #expect(configuration?.metrics.port == 9100)
        #expect(configuration?.metrics.listen == "[::1]:9100")
    }
}
