import FleetConfiguration

/// How the client reaches and identifies itself to the broker: what `[mqtt]` says, with the
/// password already read from its file (and the file, read again before each connection).
public struct MQTTConnectionSettings: Sendable, Equatable {
    /// The configuration's own (`protocol` in `[mqtt]`).
    public typealias ProtocolVersion = MQTTSettings.ProtocolVersion

    public var host: String
    public var port: Int
    /// `mqtts://`: TLS, with the peer verified against `caFile` (or the system's CAs) and the host name.
    public var tls: Bool
    public var clientID: String
    public var protocolVersion: ProtocolVersion
    public var username: String?
    public var password: String?
    /// Read before each connection attempt; `password` stands while it cannot be read.
    public var passwordFile: String?
    /// Warn (once per client) when `passwordFile` is readable by its group or others: true for
    /// a path given in `[mqtt]`, false for a systemd credential (systemd sets its mode).
    public var checkPasswordFileMode: Bool
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    /// Seconds between keepalive pings; the broker declares the client gone (and publishes its
    /// Will) after 1.5 times this without traffic.
    public var keepAlive: Int32
    /// Published by the broker when the connection ends without a DISCONNECT (a crash, a kill,
    /// a lost network).
    public var will: MQTTMessage?
    /// Topic filters subscribed (QoS 1) on every connection.
    public var subscriptions: [String]

    public init(
        host: String, port: Int, tls: Bool = false, clientID: String, protocolVersion: ProtocolVersion = .v311,
        username: String? = nil, password: String? = nil, passwordFile: String? = nil, checkPasswordFileMode: Bool = false, caFile: String? = nil, certFile: String? = nil,
        keyFile: String? = nil, keepAlive: Int32 = 30, will: MQTTMessage? = nil, subscriptions: [String] = []
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.username = username
        self.password = password
        self.passwordFile = passwordFile
        self.checkPasswordFileMode = checkPasswordFileMode
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.keepAlive = keepAlive
        self.will = will
        self.subscriptions = subscriptions
    }
}
