/// A complete HTTP/1.1 response, always with `Content-Length` and `Connection: close`
/// (one request per connection keeps the endpoint simple and a client cannot hold it open).
struct HTTPResponse: Equatable, Sendable {
    var status: Int
    var reason: String
    var contentType: String
    var body: [UInt8]
    var extraHeaders: [(String, String)] = []

    /// The bytes to send; for `HEAD` the same head (`Content-Length` of the body) without the body.
    func serialized(includeBody: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        head += "Content-Type: \(contentType)\r\n"
        head += "Content-Length: \(body.count)\r\n"
        head += "Cache-Control: no-store\r\n"
        for (name, value) in extraHeaders { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (includeBody ? body : [])
    }

    static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.extraHeaders.map { "\($0): \($1)" } == rhs.extraHeaders.map { "\($0): \($1)" }
    }

    // MARK: - The endpoint's responses

    /// The Prometheus text exposition format, version 0.0.4.
    static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

    static func metrics(_ exposition: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: 200, reason: "OK", contentType: prometheusContentType, body: exposition)
    }

    static let index = HTTPResponse(
        status: 200, reason: "OK", contentType: "text/html; charset=utf-8",
        body: Array("""
            <!DOCTYPE html>
            <html><head><title>wearfleetd</title></head>
            <body><h1>wearfleetd</h1><p>Prometheus metrics: <a href="/metrics">/metrics</a></p></body></html>

            """.utf8))

    static let notFound = plain(404, "Not Found", "Not found. Metrics are at /metrics.\n")
    static let methodNotAllowed = HTTPResponse(
        status: 405, reason: "Method Not Allowed", contentType: "text/plain; charset=utf-8",
        body: Array("Only GET and HEAD are served.\n".utf8), extraHeaders: [("Allow", "GET, HEAD")])
    static let requestTimeout = plain(408, "Request Timeout", "The request did not arrive in time.\n")
    static let headerFieldsTooLarge = plain(431, "Request Header Fields Too Large", "The request is too large.\n")
    static let serviceUnavailable = plain(503, "Service Unavailable", "Too many connections; try again.\n")

    static func badRequest(_ why: String) -> HTTPResponse {
        plain(400, "Bad Request", "Bad request: \(why).\n")
    }

    private static func plain(_ status: Int, _ reason: String, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, reason: reason, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
    }
}
