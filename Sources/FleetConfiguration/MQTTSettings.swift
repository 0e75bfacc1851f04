import FleetControl

/// `[mqtt]`: the fleet on an MQTT broker. Off unless `enabled = true`.
public struct MQTTSettings: Equatable, Sendable {
    /// The command ops a broker may send (`allow_commands`): the catalogue's (`CommandCatalogue`).
    public typealias CommandOp = CommandName

    public enum ProtocolVersion: String, Sendable, Equatable {
        case v311 = "3.1.1"
        case v5 = "5"
    }

    public var enabled = false
    /// `url`'s host (brackets removed for IPv6), port and scheme (`mqtts://` is TLS).
    public var host = "localhost"
    public var port = 1883
    public var tls = false
    /// Nil: `wearfleet-<gateway_id>`.
    public var clientID: String?
    public var protocolVersion = ProtocolVersion.v311
    public var username: String?
    /// An absolute path, or a bare name: a credential in `$CREDENTIALS_DIRECTORY` (systemd's
    /// `LoadCredential=`).
    public var passwordFile: String?
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    public var topicPrefix = "wearfleet"
    /// Nil: the host name.
    public var gatewayID: String?
    public var homeAssistantDiscovery = true
    public var discoveryPrefix = "homeassistant"
    /// Ops accepted from `<prefix>/device/<ADDR>/command` and `<prefix>/gateway/<id>/request/<op>`;
    /// none by default.
    public var allowCommands: Set<CommandOp> = []

    public init() {}

    /// `url` as written: `mqtt://host:port`, `mqtts://[v6]:port`.
    public var url: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "mqtts" : "mqtt")://\(hostPart):\(port)"
    }
}
