import TOML
import Logging

/// `[daemon]`: how the daemon itself behaves, apart from any device.
public struct DaemonSettings: Equatable, Sendable {
    /// Disconnect every device on a clean stop (`systemctl stop`), so the wearables start
    /// advertising again for other gateways. False leaves links to BlueZ. Default true.
    public var disconnectOnStop: Bool = true
    /// How long device-state changes are gathered before the state file is written, so a fleet
    /// that reconnects at once causes one write, not one per device. Default 2 s.
    public var stateDebounce: Duration = .seconds(2)
    /// Minimum level logged. Default `info`.
    public var logLevel: Logger.Level = .info

    public init() {}
}
