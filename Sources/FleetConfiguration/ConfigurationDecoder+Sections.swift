// One function per section. Each applies the keys that are present and valid over the defaults;
// cross-section checks (class names, duplicate addresses) run once every section is decoded.

import TOML
import FleetCore
import GATT
import Logging

extension ConfigurationDecoder {
    mutating func decode(_ document: TOMLTable) -> WearfleetConfiguration {
        var configuration = WearfleetConfiguration()
        let root = ConfigSection(table: document, name: "the top level")
        for entry in document.entries where !ConfigurationSchema.sections.contains(entry.key) {
            let hint = KeySuggestion.hint(for: entry.key, among: ConfigurationSchema.sections) { "[\($0)]" }
            if case .table = entry.value {
                report("unknown section [\(entry.key)]\(hint)", at: entry.keyPosition)
            } else {
                report("unknown key '\(entry.key)' at the top level\(hint)", at: entry.keyPosition)
            }
        }
        if let section = table(root, "daemon", name: "[daemon]") { decodeDaemon(section, into: &configuration.daemon) }
        if let section = table(root, "fleet", name: "[fleet]") { decodeFleet(section, into: &configuration.fleet) }
        if let section = table(root, "pool", name: "[pool]") { decodePool(section, into: &configuration.pool) }
        if let section = table(root, "reconnect", name: "[reconnect]") { configuration.reconnect = decodeReconnect(section) }
        if let section = table(root, "metrics", name: "[metrics]") { decodeMetrics(section, into: &configuration.metrics) }
        if let section = table(root, "mqtt", name: "[mqtt]") { decodeMQTT(section, into: &configuration.mqtt) }
        if let section = table(root, "cluster", name: "[cluster]") {
            let mqttEnabled = Self.mqttEnabled(in: document, decoded: configuration.mqtt.enabled)
            decodeCluster(section, mqttEnabled: mqttEnabled, into: &configuration.cluster)
        }
        if let section = table(root, "pairing", name: "[pairing]") { decodePairing(section, into: &configuration.pairing) }
        if let section = table(root, "classes", name: "[classes]") { decodeClasses(section, into: &configuration.classes) }
        if let entry = document["pinned"] {
            if case .array(let entries) = entry.value {
                configuration.pinned = decodePinned(entries)
            } else {
                report("'pinned' must be an array of tables ([[pinned]]), found \(entry.value.typeDescription)", at: entry.node.position)
            }
        }
        checkClassReferences(configuration)
        return configuration
    }

    // MARK: - [daemon]

    mutating func decodeDaemon(_ section: ConfigSection, into daemon: inout DaemonSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.daemon)
        if let value = boolean(section, "disconnect_on_stop") { daemon.disconnectOnStop = value }
        if let value = duration(section, "state_debounce") { daemon.stateDebounce = value }
        if section["forget_after"] != nil {
            // "0s" keeps known devices forever; anything else within the range.
            if case .string("0s")? = section["forget_after"]?.value {
                daemon.forgetAfter = nil
            } else if let value = duration(
                section, "forget_after", minimum: DaemonSettings.forgetAfterRange.lowerBound, maximum: DaemonSettings.forgetAfterRange.upperBound)
            {
                daemon.forgetAfter = value
            }
        }
        if let (text, position) = string(section, "log_level") {
            let levels = Logger.Level.allCases.map(\.rawValue)
            if let level = Logger.Level(rawValue: text) {
                daemon.logLevel = level
            } else {
                report("'log_level' in [daemon]: '\(text)' is not a log level (one of \(levels.joined(separator: ", ")))\(KeySuggestion.hint(for: text, among: levels))", at: position)
            }
        }
    }

    // MARK: - [fleet]

    mutating func decodeFleet(_ section: ConfigSection, into fleet: inout FleetSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.fleet)
        if let names = strings(section, "adapters") {
            var adapters: [AdapterID] = []
            for (text, position) in names {
                guard let adapter = adapter(text, key: "adapters", in: section, at: position) else { continue }
                if adapters.contains(adapter) {
                    report("'adapters' in [fleet] lists \(text) twice", at: position)
                } else {
                    adapters.append(adapter)
                }
            }
            fleet.adapters = adapters
        }
        if let value = integer(section, "max_connections", in: 0...1000) { fleet.maxConnections = value }
        if let value = integer(section, "slots_per_adapter", in: 0...64) { fleet.slotsPerAdapter = value }
        if let slots = table(section, "adapter_slots", name: "[fleet.adapter_slots]") {
            for entry in slots.table.entries {
                guard let adapter = adapter(entry.key, key: entry.key, in: slots, at: entry.keyPosition),
                      let count = integer(slots, entry.key, in: 0...64) else { continue }
                if !fleet.adapters.isEmpty, !fleet.adapters.contains(adapter) {
                    report("[fleet.adapter_slots] sets slots for \(entry.key), which is not in 'adapters'", at: entry.keyPosition)
                }
                fleet.adapterSlots[adapter] = count
            }
        }
        if let value = uuids(section, "scan_services") { fleet.scanServices = value }
        if let value = integer(section, "min_rssi", in: -127...20) { fleet.minimumRSSI = value }
        if let value = integer(section, "attempt_burst", in: 1...100) { fleet.attemptBurst = value }
        if let value = duration(section, "attempt_interval", minimum: .milliseconds(1)) { fleet.attemptInterval = value }
    }

    // MARK: - [metrics]

    mutating func decodeMetrics(_ section: ConfigSection, into metrics: inout MetricsSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.metrics)
        if let value = boolean(section, "enabled") { metrics.enabled = value }
        if let (text, position) = string(section, "listen") {
            if text.isEmpty {
                metrics.enabled = false  // `listen = ""` is the documented way to turn metrics off
            } else if let (host, port) = Self.hostAndPort(text) {
                metrics.host = host
                metrics.port = port
            } else {
                report("'listen' in [metrics]: '\(text)' is not an address (write host:port, e.g. \"127.0.0.1:9468\" or \"[::1]:9468\")", at: position)
            }
        }
    }

    /// `host:port` or `[v6]:port`, port 1...65535. The host is not resolved here.
    static func hostAndPort(_ text: String) -> (String, Int)? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }),
              (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}
