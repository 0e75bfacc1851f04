import TOML

/// `[metrics]`: the Prometheus endpoint. Off when `enabled = false` or `listen = ""`.
public struct MetricsSettings: Equatable, Sendable {
    /// Whether the endpoint is served; `listen = ""` in the config sets it false.
    public var enabled: Bool = true
    /// Host part of `listen` (brackets removed for IPv6). Default loopback.
    public var host: String = "127.0.0.1"
    public var port: Int = 9468

    public init() {}

    public init(enabled: Bool = true, host: String, port: Int) {
        self.enabled = enabled
        self.host = host
        self.port = port
    }

    /// `host:port` as written in the config (`[::1]:9468` for IPv6).
    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
