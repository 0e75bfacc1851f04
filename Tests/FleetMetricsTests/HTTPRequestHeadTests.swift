import Testing
@testable import FleetMetrics

@Suite("Parsing the request head")
struct HTTPRequestHeadTests {
    func parse(_ text: String) -> HTTPRequestHead.Parse { HTTPRequestHead.parse(Array(text.utf8)) }

    @Test func aHeadWithoutItsEmptyLineIsIncomplete() {
        #expect(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n") == .incomplete)
        #expect(parse("GET /metr") == .incomplete)
        #expect(parse("\r\n\r\n") == .incomplete, "empty lines before the request line do not end it")
    }

    @Test func theQueryIsNotPartOfThePath() {
        #expect(parse("GET /metrics?name[]=up HTTP/1.1\r\n\r\n") == .complete(HTTPRequestHead(method: "GET", path: "/metrics")))
    }

    @Test func leadingEmptyLinesAndBareLineFeedsAreAccepted() {
        #expect(parse("\r\nHEAD / HTTP/1.0\n\n") == .complete(HTTPRequestHead(method: "HEAD", path: "/")))
    }

    @Test(arguments: [
        "GET /metrics\r\n\r\n", "GET /metrics HTTP/2\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
        "GET  /metrics HTTP/1.1\r\n\r\n", "GET /\u{7F} HTTP/1.1\r\n\r\n",
    ])
    func malformedRequestLinesAreInvalid(_ text: String) {
        guard case .invalid = parse(text) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
    }

    @Test func routes() {
        #expect(MetricsRoute.route(HTTPRequestHead(method: "GET", path: "/metrics")) == .metrics(includeBody: true))
        #expect(MetricsRoute.route(HTTPRequestHead(method: "HEAD", path: "/metrics")) == .metrics(includeBody: false))
        #expect(MetricsRoute.route(HTTPRequestHead(method: "GET", path: "/")) == .respond(.index, includeBody: true))
        #expect(MetricsRoute.route(HTTPRequestHead(method: "POST", path: "/metrics")) == .respond(.methodNotAllowed, includeBody: true))
        #expect(MetricsRoute.route(HTTPRequestHead(method: "GET", path: "/metrics/")) == .respond(.notFound, includeBody: true))
        #expect(MetricsRoute.route(HTTPRequestHead(method: "DELETE", path: "/x")) == .respond(.notFound, includeBody: true))
    }
}
