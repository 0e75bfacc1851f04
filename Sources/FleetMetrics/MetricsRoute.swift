/// What the endpoint does with a request: a fixed response, or the metrics (rendered off the
/// endpoint's thread, because rendering asks the orchestrator for a snapshot).
enum MetricsRoute: Equatable {
    case respond(HTTPResponse, includeBody: Bool)
    case metrics(includeBody: Bool)

    static let metricsPath = "/metrics"

    /// `GET`/`HEAD` on `/metrics` and `/`; other methods on those paths are 405, other paths 404.
    static func route(_ head: HTTPRequestHead) -> MetricsRoute {
        let known = head.path == metricsPath || head.path == "/"
        guard known else { return .respond(.notFound, includeBody: head.method != "HEAD") }
        guard head.method == "GET" || head.method == "HEAD" else { return .respond(.methodNotAllowed, includeBody: true) }
        let includeBody = head.method == "GET"
        return head.path == metricsPath ? .metrics(includeBody: includeBody) : .respond(.index, includeBody: includeBody)
    }
}
