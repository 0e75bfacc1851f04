import TOML
import FleetCore
import GATT

extension ConfigurationDecoder {
    static let qosNames = OutgoingQoS.allCases.map(\.description)

    /// Every key of `[classes]` is a class name whose value is a table.
    mutating func decodeClasses(_ section: ConfigSection, into classes: inout [String: DeviceClassSettings]) {
        for entry in section.table.entries {
            guard case .table(let table) = entry.value else {
                report("'\(entry.key)' in [classes] must be a table ([classes.\(entry.key)]), found \(entry.value.typeDescription)", at: entry.node.position)
                continue
            }
            let name = entry.key
            guard !name.isEmpty else {
                report("a class name must not be empty", at: entry.keyPosition)
                continue
            }
            classes[name] = decodeClass(named: name, ConfigSection(table: table, name: "[classes.\(TOMLParser.displayKey(name))]"))
        }
    }

    mutating func decodeClass(named name: String, _ section: ConfigSection) -> DeviceClassSettings {
        for removed in ConfigurationSchema.removedDeviceClassKeys {
            if let entry = section[removed.key] { report("\(removed.why) (in \(section.name))", at: entry.keyPosition) }
        }
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.deviceClass + ConfigurationSchema.removedDeviceClassKeys.map(\.key))
        var settings = DeviceClassSettings(name: name)
        if let value = uuids(section, "read") { settings.read = value }
        if let value = uuids(section, "subscribe") { settings.subscribe = value }
        if let value = uuids(section, "required_services") { settings.requiredServices = value }
        if let value = uuids(section, "required_characteristics") { settings.requiredCharacteristics = value }
        if let value = boolean(section, "fd_path") { settings.fileDescriptorPath = value }
        if let value = boolean(section, "bond") { settings.bond = value }
        if let value = boolean(section, "intermittent") { settings.intermittent = value }
        if let value = boolean(section, "set_time") { settings.setTime = value }
        if settings.intermittent, settings.fileDescriptorPath, let entry = section["fd_path"] {
            // A sleeping device must be subscribed on its cached attributes before it wakes
            // (its records come the moment the link is encrypted), which only StartNotify can.
            report("'fd_path' in \(section.name): an intermittent class takes its few measurements over D-Bus (StartNotify); "
                + "set fd_path = false or intermittent = false", at: entry.keyPosition)
        }
        if let depths = table(section, "queue_depth", name: "[classes.\(TOMLParser.displayKey(name)).queue_depth]") {
            rejectUnknownKeys(in: depths, allowed: Self.qosNames)
            for qos in OutgoingQoS.allCases {
                if let value = integer(depths, qos.description, in: 0...65536) { settings.queueDepth[qos] = value }
            }
        }
        if let (text, position) = string(section, "default_qos") {
            if let qos = OutgoingQoS.allCases.first(where: { $0.description == text }) {
                settings.defaultQoS = qos
            } else {
                report("'default_qos' in \(section.name): '\(text)' is not a QoS (one of control, normal, bulk)\(KeySuggestion.hint(for: text, among: Self.qosNames))", at: position)
            }
        }
        if case .some(let value) = optionalDuration(section, "coalescing_window") { settings.coalescingWindow = value }
        if let value = integer(section, "write_failure_threshold", in: 1...1000) { settings.writeFailureThreshold = value }
        if let timeouts = table(section, "timeouts", name: "[classes.\(TOMLParser.displayKey(name)).timeouts]") {
            rejectUnknownKeys(in: timeouts, allowed: ConfigurationSchema.timeouts)
            let minimum = Duration.milliseconds(1)
            if let value = duration(timeouts, "resolve", minimum: minimum) { settings.timeouts.resolve = value }
            if let value = duration(timeouts, "connect", minimum: minimum) { settings.timeouts.connect = value }
            if let value = duration(timeouts, "discovery", minimum: minimum) { settings.timeouts.discovery = value }
            if let value = duration(timeouts, "subscribe", minimum: minimum) { settings.timeouts.subscribe = value }
            if let value = duration(timeouts, "write", minimum: minimum) {
                let limit = DeviceStateMachine.Timeouts.maximumWrite
                if value > limit, let entry = timeouts["write"] {
                    report(
                        "'write' in \(timeouts.name) must be at most \(ConfigDuration.format(limit)), found \(ConfigDuration.format(value)): "
                            + "a Write command answers within 24s, its queue wait, this timeout and 1s of margin",
                        at: entry.node.position)
                } else {
                    settings.timeouts.write = value
                }
            }
            if let value = duration(timeouts, "recovery_interval", minimum: minimum) { settings.timeouts.recoveryInterval = value }
        }
        return settings
    }

    /// Every class named by a pinned device, a pool rule or the pool default must exist.
    mutating func checkClassReferences(_ configuration: WearfleetConfiguration) {
        let defined = configuration.classes.keys.sorted()
        for reference in classReferences where configuration.classes[reference.name] == nil {
            let hint = KeySuggestion.hint(for: reference.name, among: defined)
            report("\(reference.user): class '\(reference.name)' is not defined\(hint) (defined: \(defined.joined(separator: ", ")))", at: reference.position)
        }
    }
}
