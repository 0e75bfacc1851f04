import Foundation
import Glibc

/// One scrape of the daemon's Prometheus endpoint (`GET /metrics` over loopback HTTP), as a
/// scraper sees it: the samples of the text exposition, by name and labels.
///
/// The request runs on a thread of its own with socket timeouts: the daemon renders with the help
/// of the in-process simulator, which needs this process's task pool.
struct MetricsScrape: Sendable {
    struct Sample: Sendable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let samples: [Sample]

    /// The value of the one sample of `name` whose labels include `labels`; nil when there is
    /// none, or more than one.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matching = samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
        return matching.count == 1 ? matching[0].value : nil
    }

    /// The sum of every sample of `name`.
    func sum(_ name: String) -> Double {
        samples.filter { $0.name == name }.reduce(0) { $0 + $1.value }
    }

    /// Scrapes `http://127.0.0.1:port/metrics`.
    static func fetch(port: Int, timeout seconds: Int = 60) async throws -> MetricsScrape {
        let body = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            Thread.detachNewThread { continuation.resume(with: Result { try get(port: port, timeout: seconds) }) }
        }
        return try MetricsScrape(exposition: body)
    }

    init(exposition: String) throws {
        var samples: [Sample] = []
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            guard let sample = Self.sample(line) else { throw Failure(description: "not a sample line: \(line)") }
            samples.append(sample)
        }
        self.samples = samples
    }

    /// `name{key="value",…} value` or `name value`; label values unescaped (`\\`, `\"`, `\n`).
    private static func sample(_ line: Substring) -> Sample? {
        var labels: [String: String] = [:]
        let name: Substring
        var rest: Substring
        if let brace = line.firstIndex(of: "{") {
            name = line[..<brace]
            rest = line[line.index(after: brace)...]
            while !rest.hasPrefix("}") {
                guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].hasPrefix("\"") else { return nil }
                let key = String(rest[..<equals])
                var value = ""
                var index = rest.index(equals, offsetBy: 2)
                var closed = false
                while index < rest.endIndex {
                    let character = rest[index]
                    index = rest.index(after: index)
                    if character == "\"" { closed = true; break }
                    if character == "\\", index < rest.endIndex {
                        let escaped = rest[index]
                        index = rest.index(after: index)
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { return nil }
                labels[key] = value
                rest = rest[index...]
                if rest.hasPrefix(",") { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        } else {
            guard let space = line.firstIndex(of: " ") else { return nil }
            name = line[..<space]
            rest = line[space...]
        }
        guard !name.isEmpty, let value = Double(rest.trimmingCharacters(in: .whitespaces)) else { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }

    /// A blocking HTTP/1.1 GET; the endpoint closes the connection after its response.
    private static func get(port: Int, timeout seconds: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw Failure(description: "send: errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            guard count > 0 else { throw Failure(description: "recv: errno \(errno)") }
            response.append(contentsOf: buffer[..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let split = text.range(of: "\r\n\r\n") else {
            throw Failure(description: "not a 200 response: \(text.prefix(200))")
        }
        return String(text[split.upperBound...])
    }
}
