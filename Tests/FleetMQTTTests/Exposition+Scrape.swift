import TestSupport

/// One scrape of the daemon's Prometheus endpoint (`GET /metrics` over loopback HTTP), read by
/// the metrics tests' strict exposition reader.
extension Exposition {
    struct ScrapeFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Scrapes `http://127.0.0.1:port/metrics`.
    static func scrape(port: Int) async throws -> Exposition {
        let reply = try await HTTPTestClient.get("/metrics", port: port)
        guard reply.status == 200 else { throw ScrapeFailed(description: "not a 200 response: \(reply.raw.prefix(200))") }
        return try Exposition(reply.body)
    }

    /// The sum of every sample of `name`, whatever its labels.
    func sum(_ name: String) -> Double { values(name).reduce(0, +) }
}
