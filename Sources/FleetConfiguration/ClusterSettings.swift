import TOML
import FleetCore

// The defaults are read from `OwnershipConfiguration` rather than written again here, so the file's
// defaults and the machine's can never drift apart; the machine's doc comments say why each is
// what it is.

/// `[cluster]`: several gateways sharing one fleet, agreeing through the MQTT broker which of them
/// connects each device (`OwnershipMachine`). Off unless `enabled = true`, which needs `[mqtt]`.
public struct ClusterSettings: Hashable, Sendable {
    private static let machineDefaults = OwnershipConfiguration()

    public var enabled = false
    /// How long a silent gateway still owns its devices. Default 15 s.
    public var lease: Duration = machineDefaults.lease
    /// The heartbeat period; `lease` is at least two of them. Default 5 s.
    public var renewal: Duration = machineDefaults.renewal
    /// How long a claim stands before its gateway connects the device. Default 1 s.
    public var settle: Duration = machineDefaults.settle
    /// `bid_margin`: by how much (dB-equivalent) another gateway's bid must beat the owner's
    /// before the device may move. Default 8.
    public var margin: Double = machineDefaults.margin
    /// How long a better bid must keep winning before the device moves. Default 30 s.
    public var dwell: Duration = machineDefaults.dwell

    public init() {}
}
