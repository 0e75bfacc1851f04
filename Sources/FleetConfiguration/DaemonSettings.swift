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
    /// Known devices not seen (connected, or their link ending) for this long are dropped from
    /// the state file, unless pinned; nil (`"0s"`) keeps them forever. Default 30 days.
    public var forgetAfter: Duration? = Self.defaultForgetAfter

    public static let defaultForgetAfter: Duration = .seconds(30 * 86_400)
    /// `forget_after`'s bounds: shorter than an hour would forget a device over a lunch break;
    /// longer than ten years is a unit slip.
    public static let forgetAfterRange: ClosedRange<Duration> = .seconds(3600) ... .seconds(3650 * 86_400)

    public init() {}
}
