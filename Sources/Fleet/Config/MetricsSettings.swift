/// `[metrics]`: the Prometheus endpoint.
public struct MetricsSettings: Equatable, Sendable {
    public var enabled: Bool = true
    /// Host part of `listen` (brackets removed for IPv6). Default loopback.
    public var host: String = "127.0.0.1"
    public var port: Int = 9468

    public init() {}

    /// `host:port` as written in the config (`[::1]:9468` for IPv6).
    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
