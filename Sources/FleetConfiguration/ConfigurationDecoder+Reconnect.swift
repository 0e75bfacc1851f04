import TOML
import FleetCore

extension ConfigurationDecoder {
    /// `failure class` ↔ config key.
    static let budgetKeys: [(key: String, failure: FailureClass)] = [
        ("transient", .transient), ("out_of_slots", .outOfSlots), ("bluetooth_off", .bluetoothOff),
        ("not_ready", .notReady), ("protocol", .protocol), ("gone", .gone), ("busy", .busy),
        ("denied", .denied), ("pairing", .pairing), ("unknown", .unknown),
    ]

    /// `[reconnect]` with `[reconnect.budgets]` and `[reconnect.breaker]`. Inconsistent values
    /// (cap below base, …) are errors here even though `ReconnectPolicy` would clamp them.
    mutating func decodeReconnect(_ section: ConfigSection) -> ReconnectPolicy {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.reconnect)
        let defaults = ReconnectPolicy()
        let base = duration(section, "base", minimum: .milliseconds(1)) ?? defaults.baseDelay
        var cap = defaults.maxDelay
        if let value = duration(section, "cap", minimum: .milliseconds(1)), let entry = section["cap"] {
            if value < base {
                report("'cap' in [reconnect] (\(ConfigDuration.format(value))) must not be below 'base' (\(ConfigDuration.format(base)))", at: entry.node.position)
            }
            cap = value
        }
        var budgets = defaults.budgets
        if let table = table(section, "budgets", name: "[reconnect.budgets]") {
            rejectUnknownKeys(in: table, allowed: Self.budgetKeys.map(\.key))
            for (key, failure) in Self.budgetKeys {
                guard let entry = table[key] else { continue }
                if case .string("unlimited") = entry.value {
                    budgets[failure] = nil
                } else if case .integer = entry.value {
                    if let value = integer(table, key, in: 0...1_000_000) { budgets[failure] = value }
                } else {
                    wrongType(entry, in: table, expected: "an integer or \"unlimited\"")
                }
            }
        }
        var giveUp = defaults.giveUpClasses
        if let names = strings(section, "give_up") {
            giveUp = []
            let keys = Self.budgetKeys.map(\.key)
            for (name, position) in names {
                if let failure = Self.budgetKeys.first(where: { $0.key == name })?.failure {
                    giveUp.insert(failure)
                } else {
                    report("'give_up' in [reconnect]: '\(name)' is not a failure class (one of \(keys.joined(separator: ", ")))\(KeySuggestion.hint(for: name, among: keys))", at: position)
                }
            }
        }
        var breakerThreshold = defaults.breakerThreshold
        var breakerCooldown = defaults.breakerCooldown
        var breakerMultiplier = defaults.breakerCooldownMultiplier
        var breakerMax = defaults.breakerMaxCooldown
        if let breaker = table(section, "breaker", name: "[reconnect.breaker]") {
            rejectUnknownKeys(in: breaker, allowed: ConfigurationSchema.breaker)
            breakerThreshold = integer(breaker, "threshold", in: 1...1000) ?? breakerThreshold
            breakerCooldown = duration(breaker, "cooldown", minimum: .milliseconds(1)) ?? breakerCooldown
            breakerMultiplier = number(breaker, "cooldown_multiplier", in: 1...100) ?? breakerMultiplier
            if let value = duration(breaker, "max_cooldown", minimum: .milliseconds(1)), let entry = breaker["max_cooldown"] {
                if value < breakerCooldown {
                    report("'max_cooldown' in [reconnect.breaker] (\(ConfigDuration.format(value))) must not be below 'cooldown' (\(ConfigDuration.format(breakerCooldown)))", at: entry.node.position)
                }
                breakerMax = value
            }
        }
        return ReconnectPolicy(
            baseDelay: base,
            maxDelay: cap,
            multiplier: number(section, "multiplier", in: 1...100) ?? defaults.multiplier,
            jitterFraction: number(section, "jitter", in: 0...1) ?? defaults.jitterFraction,
            fastFirstRetryDelay: duration(section, "fast_first_retry") ?? defaults.fastFirstRetryDelay,
            stablePeriod: duration(section, "stable_period") ?? defaults.stablePeriod,
            budgets: budgets,
            giveUpClasses: giveUp,
            budgetCooldown: duration(section, "budget_cooldown", minimum: .milliseconds(1)) ?? defaults.budgetCooldown,
            breakerThreshold: breakerThreshold,
            breakerCooldown: breakerCooldown,
            breakerCooldownMultiplier: breakerMultiplier,
            breakerMaxCooldown: breakerMax
        )
    }
}
