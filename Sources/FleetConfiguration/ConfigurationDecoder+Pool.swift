import TOML
import FleetCore
import GATT

extension ConfigurationDecoder {
    mutating func decodePool(_ section: ConfigSection, into pool: inout PoolSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.pool)
        if let value = boolean(section, "enabled") { pool.enabled = value }
        if let prefixes = strings(section, "name_prefixes") { pool.namePrefixes = prefixes.map(\.value) }
        if let value = uuids(section, "services") { pool.services = value }
        if let value = integer(section, "min_rssi", in: -127...20) { pool.minimumRSSI = value }
        if let (name, position) = name(section, "default_class") {
            pool.defaultClass = name
            classReferences.append((name, position, "'default_class' in [pool]"))
        }
        if let value = integer(section, "default_priority", in: FleetPinOptions.priorities) { pool.defaultPriority = value }
        if let value = duration(section, "min_dwell") { pool.minimumDwell = value }
        if let value = number(section, "score_margin", in: 0...1_000_000) { pool.scoreMargin = value }
        if let value = number(section, "priority_weight", in: 0...1_000_000) { pool.weights.priority = value }
        if let value = number(section, "rssi_weight", in: 0...1_000_000) { pool.weights.rssi = value }
        if let value = number(section, "failure_weight", in: 0...1_000_000) { pool.weights.recentFailures = value }
        if let rules = array(section, "rules") {
            pool.rules = rules.compactMap { decodeRule($0) }
        }
    }

    mutating func decodeRule(_ node: TOMLNode) -> PoolRule? {
        guard case .table(let table) = node.value else {
            report("'rules' in [pool] must hold tables ([[pool.rules]]), found \(node.value.typeDescription)", at: node.position)
            return nil
        }
        let section = ConfigSection(table: table, name: "[[pool.rules]]")
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.poolRule)
        var rule = PoolRule()
        rule.namePrefix = string(section, "name_prefix")?.value
        if let (text, position) = string(section, "service") {
            rule.service = uuid(text, key: "service", in: section, at: position)
        }
        rule.priority = integer(section, "priority", in: FleetPinOptions.priorities)
        if let (name, position) = name(section, "class") {
            rule.className = name
            classReferences.append((name, position, "[[pool.rules]] entry"))
        }
        if section["name_prefix"] == nil, section["service"] == nil {
            report("[[pool.rules]] entry must say what it matches: 'name_prefix', 'service' or both", at: table.position)
        }
        if section["priority"] == nil, section["class"] == nil {
            report("[[pool.rules]] entry must set 'priority', 'class' or both", at: table.position)
        }
        return rule
    }
}
