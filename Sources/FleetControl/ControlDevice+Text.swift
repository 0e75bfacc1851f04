extension ControlDevice {
    /// The address as people read it: `AA:BB:CC:DD:EE:FF`, with ` (random)` for random
    /// addresses (the same six bytes can name a public and a random device).
    public var addressText: String {
        addressType == "public" ? address : "\(address) (\(addressType))"
    }

    /// `pinned` or `pool`.
    public var roleText: String { pinned ? "pinned" : "pool" }

    /// The state with what an operator needs next to it: `ready`, `degraded: writesFailing`,
    /// `backingOff #3, retry in 4.2s`, `suspended: circuitOpen, retry in 25s`.
    public var stateText: String {
        var text = state
        if let retryAttempt { text += " #\(retryAttempt)" }
        if let stateReason { text += ": \(stateReason)" }
        if let nextAttemptIn { text += ", retry " + Self.retryText(nextAttemptIn) }
        return text
    }

    /// RSSI with its unit, for the detail view.
    var rssiText: String? { rssi.map { "\($0) dBm" } }

    static func retryText(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0.05 else { return "now" }
        if seconds < 10 {
            let tenths = Int((seconds * 10).rounded())
            return "in \(tenths / 10).\(tenths % 10)s"
        }
        if seconds < 120 { return "in \(Int(seconds.rounded()))s" }
        if seconds < 7200 { return "in \(Int((seconds / 60).rounded()))m" }
        return "in \(Int((seconds / 3600).rounded()))h"
    }
}
