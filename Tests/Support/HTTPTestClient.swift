import Foundation
import Glibc

/// A response as a client read it off the socket.
public struct HTTPReply: Sendable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: String
    public var raw: String
}

public enum HTTPTestClientError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case malformed(String)

    public var description: String {
        switch self {
        case .socket(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .malformed(let text): "not an HTTP response: \(text.prefix(200))"
        }
    }
}

/// A plain-socket HTTP client for the endpoint tests. Its I/O blocks (with a receive timeout),
/// so it runs on a thread of its own: test tasks never hold the cooperative pool, which also runs
/// the endpoint's render tasks.
///
/// Timeouts are generous on purpose: in a full test run the task pool can be busy for tens of
/// seconds (other suites block it while spawning buses and processes), which delays renders.
public enum HTTPTestClient {
    public static let patience: Double = 120

    /// Sends `request` verbatim and reads until the server closes the connection.
    public static func exchange(_ request: String, host: String = "127.0.0.1", port: Int, timeout: Double = patience) async throws -> HTTPReply {
        try await onThread {
            let fd = try connect(host: host, port: port, timeout: timeout)
            defer { close(fd) }
            try send(fd, Array(request.utf8))
            return try parse(readAll(fd))
        }
    }

    public static func get(_ path: String, host: String = "127.0.0.1", port: Int) async throws -> HTTPReply {
        try await exchange("GET \(path) HTTP/1.1\r\nHost: test\r\nUser-Agent: wearfleet-tests\r\n\r\n", host: host, port: port)
    }

    /// A connected blocking socket with send and receive timeouts.
    public static func connect(host: String, port: Int, timeout: Double = patience) throws -> Int32 {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestClientError.socket("socket", errno) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw HTTPTestClientError.socket("connect", code)
        }
        return fd
    }

    public static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw HTTPTestClientError.socket("send", errno) }
            offset += count
        }
    }

    /// Everything until end of file (the server closes after each response).
    public static func readAll(_ fd: Int32) throws -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return data }
            guard count > 0 else { throw HTTPTestClientError.socket("recv", errno) }
            data.append(contentsOf: buffer[..<count])
        }
    }

    public static func parse(_ bytes: [UInt8]) throws -> HTTPReply {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw HTTPTestClientError.malformed(text) }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw HTTPTestClientError.malformed(text)
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw HTTPTestClientError.malformed(text) }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPReply(status: status, headers: headers, body: String(text[split.upperBound...]), raw: text)
    }

    /// Runs blocking work on a new thread and returns its result.
    public static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
