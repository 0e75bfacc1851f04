/// Why a link went down, as BlueZ ≥ 5.83 reports it in `Device1.Disconnected(reason, message)`.
public enum DisconnectReason: String, Sendable, Codable, CaseIterable {
    case unknown, timeout, local, remote, authentication, suspend

    /// The D-Bus `reason` argument (`org.bluez.Reason.Timeout`).
    public var dbusName: String {
        "org.bluez.Reason." + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }

    /// The `message` argument: the HCI disconnect reason in words.
    public var message: String {
        switch self {
        case .unknown: return "Unspecified"
        case .timeout: return "Connection timed out"
        case .local: return "Connection terminated by local host"
        case .remote: return "Connection terminated by remote user"
        case .authentication: return "Connection terminated due to authentication failure"
        case .suspend: return "Connection terminated by local host for suspend"
        }
    }
}
