import TOML
import FleetCore

// `OwnershipConfiguration.init` clamps inconsistent numbers so the machine never traps; here they
// are errors instead, because a silently raised lease or renewal would make the gateways behave
// differently from what the operator wrote.

extension ConfigurationDecoder {
    // MARK: - [cluster]

    /// `[cluster]`. `mqttEnabled` is `[mqtt] enabled` (nil: unknown), because the gateways agree
    /// through the broker and a cluster without it would never hear its peers.
    mutating func decodeCluster(_ section: ConfigSection, mqttEnabled: Bool?, into cluster: inout ClusterSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.cluster)
        if let value = boolean(section, "enabled") {
            cluster.enabled = value
            if value, mqttEnabled == false, let entry = section["enabled"] {
                report(
                    "'enabled' in [cluster] needs [mqtt] enabled = true: the gateways agree through the broker which of them connects each device",
                    at: entry.keyPosition)
            }
        }
        let lease = duration(section, "lease", minimum: .milliseconds(1))
        let renewal = duration(section, "renewal", minimum: .milliseconds(1))
        // Not 0: the wait for a claim's round trip is what keeps two gateways from linking at once.
        let settle = duration(section, "settle", minimum: .milliseconds(1))
        if let value = duration(section, "dwell") { cluster.dwell = value }
        if let value = number(section, "bid_margin", in: 0...1_000_000) { cluster.margin = value }
        // The cross checks compare against a default only where the key is absent; a key that was
        // present but invalid is already reported and would only add a misleading second error.
        guard section["lease"] == nil || lease != nil, section["renewal"] == nil || renewal != nil,
              section["settle"] == nil || settle != nil else { return }
        let checkedLease = lease ?? cluster.lease
        let checkedRenewal = renewal ?? cluster.renewal
        let checkedSettle = settle ?? cluster.settle
        let minimumLease = checkedRenewal * 2
        if checkedLease < minimumLease {
            if let entry = section["lease"] {
                report(
                    "'lease' in [cluster] (\(ConfigDuration.format(checkedLease))) must be at least two renewals, 2 × \(ConfigDuration.format(checkedRenewal)) = \(ConfigDuration.format(minimumLease)): one lost heartbeat must not hand this gateway's devices to another",
                    at: entry.node.position)
            } else if let entry = section["renewal"] {
                report(
                    "'renewal' in [cluster] (\(ConfigDuration.format(checkedRenewal))) must be at most half of 'lease' (\(ConfigDuration.format(checkedLease))): the lease must be at least two renewals, 2 × \(ConfigDuration.format(checkedRenewal)) = \(ConfigDuration.format(minimumLease))",
                    at: entry.node.position)
            }
            return
        }
        if checkedSettle >= checkedLease {
            if let entry = section["settle"] {
                report(
                    "'settle' in [cluster] (\(ConfigDuration.format(checkedSettle))) must be shorter than 'lease' (\(ConfigDuration.format(checkedLease))): settle covers a claim's round trip through the broker, the lease several heartbeats",
                    at: entry.node.position)
            } else if let entry = section["lease"] {
                report(
                    "'lease' in [cluster] (\(ConfigDuration.format(checkedLease))) must be longer than 'settle' (\(ConfigDuration.format(checkedSettle))): settle covers a claim's round trip through the broker, the lease several heartbeats",
                    at: entry.node.position)
            }
            return
        }
        cluster.lease = checkedLease
        cluster.renewal = checkedRenewal
        cluster.settle = checkedSettle
    }

    /// `[mqtt] enabled` for the cluster's check: nil when `[mqtt]` or its `enabled` is written
    /// with the wrong type. That is reported already, and whether the broker is on is then
    /// unknown rather than false, so the check must not add a second, misleading error.
    static func mqttEnabled(in document: TOMLTable, decoded: Bool) -> Bool? {
        guard let entry = document["mqtt"] else { return decoded }
        guard case .table(let mqtt) = entry.value else { return nil }
        guard let enabled = mqtt["enabled"] else { return decoded }
        guard case .boolean = enabled.value else { return nil }
        return decoded
    }

    // MARK: - [[pinned]] preferred_gateways

    /// `preferred_gateways` of a `[[pinned]]` entry: gateway ids as `[mqtt] gateway_id` takes
    /// them, each once. Nil (reported) when any element is wrong.
    mutating func preferredGateways(_ section: ConfigSection) -> Set<GatewayID>? {
        guard let names = strings(section, "preferred_gateways") else { return nil }
        var gateways: Set<GatewayID> = []
        var valid = true
        for (text, position) in names {
            guard Self.isGatewayID(text) else {
                report(
                    "'preferred_gateways' in \(section.name): \"\(text)\" is not a gateway id (one topic level, as [mqtt] gateway_id: not empty, no '/', '+', '#' or NUL, not starting with '$')",
                    at: position)
                valid = false
                continue
            }
            if !gateways.insert(GatewayID(text)).inserted {
                report("'preferred_gateways' in \(section.name) lists \"\(text)\" twice", at: position)
                valid = false
            }
        }
        return valid ? gateways : nil
    }
}
