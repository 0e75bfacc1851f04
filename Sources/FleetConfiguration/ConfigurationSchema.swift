import TOML

// The keys each section accepts, in one place: the decoder rejects everything else, the
// unknown-key message can say where a misplaced key belongs, and a test checks that the example
// configuration documents every one of them.

/// The accepted keys of every section of `wearfleetd.toml`.
enum ConfigurationSchema {
    static let sections = ["daemon", "fleet", "pinned", "pool", "reconnect", "classes", "metrics", "mqtt", "cluster", "pairing"]
    static let daemon = ["disconnect_on_stop", "state_debounce", "log_level", "forget_after"]
    static let fleet = [
        "adapters", "max_connections", "slots_per_adapter", "adapter_slots", "scan_services",
        "min_rssi", "attempt_burst", "attempt_interval",
    ]
    static let pinned = ["address", "address_type", "name", "class", "priority", "preferred_gateways"]
    static let pool = [
        "enabled", "name_prefixes", "services", "min_rssi", "default_class", "default_priority",
        "min_dwell", "score_margin", "priority_weight", "rssi_weight", "failure_weight", "rules",
    ]
    static let poolRule = ["name_prefix", "service", "priority", "class"]
    static let reconnect = [
        "base", "cap", "multiplier", "jitter", "fast_first_retry", "stable_period",
        "budgets", "give_up", "budget_cooldown", "breaker",
    ]
    static let breaker = ["threshold", "cooldown", "cooldown_multiplier", "max_cooldown"]
    static let deviceClass = [
        "read", "subscribe", "required_services", "required_characteristics", "fd_path",
        "queue_depth", "default_qos", "coalescing_window", "write_failure_threshold", "timeouts", "bond", "intermittent",
        "set_time",
    ]
    /// Keys a device class no longer has, with why (NOTES.md, "Class keys that promised nothing"):
    /// a file that still sets one gets this at its `file:line`, not a bare "unknown key".
    static let removedDeviceClassKeys: [(key: String, why: String)] = [
        ("heartbeat", "'heartbeat' was removed: a link that stops answering is lost by the controller's supervision "
            + "timeout, which bluetoothd reports as a disconnect; a periodic GATT read only cost the wearable battery. "
            + "Delete the line"),
        ("max_in_flight_writes", "'max_in_flight_writes' was removed: ATT allows one request at a time per link and "
            + "bluetoothd refuses a second pending write on a characteristic (InProgress), so writes with response "
            + "go one at a time. Delete the line"),
    ]
    static let timeouts = ["resolve", "connect", "discovery", "subscribe", "write", "recovery_interval"]
    static let metrics = ["enabled", "listen"]
    static let mqtt = [
        "enabled", "url", "client_id", "protocol", "username", "password_file", "ca_file", "cert_file", "key_file",
        "topic_prefix", "gateway_id", "homeassistant_discovery", "discovery_prefix", "allow_commands",
    ]
    static let cluster = ["enabled", "lease", "renewal", "settle", "bid_margin", "dwell"]

    static let pairing = ["capability", "passkeys_file"]

    /// Sections by the name used in messages, for "belongs in" hints.
    static let keysBySection: [(section: String, keys: [String])] = [
        ("[daemon]", daemon), ("[fleet]", fleet), ("[[pinned]]", pinned), ("[pool]", pool),
        ("[[pool.rules]]", poolRule), ("[reconnect]", reconnect), ("[reconnect.breaker]", breaker),
        ("[classes.NAME]", deviceClass), ("[classes.NAME.timeouts]", timeouts), ("[metrics]", metrics),
        ("[mqtt]", mqtt), ("[cluster]", cluster), ("[pairing]", pairing),
    ]

    /// The sections, other than `current`, where `key` is accepted.
    static func sections(accepting key: String, except current: String) -> [String] {
        keysBySection.filter { $0.section != current && $0.keys.contains(key) }.map(\.section)
    }
}
