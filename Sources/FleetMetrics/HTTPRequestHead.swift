/// The request line of an HTTP/1.x request, parsed from the bytes received so far.
///
/// Only what the metrics endpoint needs: the method and the path. Header fields are skipped
/// (but counted against the request-size limit by the caller); a body is never read, because
/// every response closes the connection.
struct HTTPRequestHead: Equatable, Sendable {
    var method: String
    /// The target's path, without its query (`/metrics?x=1` → `/metrics`).
    var path: String

    enum Parse: Equatable {
        /// The head has not ended yet (no empty line).
        case incomplete
        case complete(HTTPRequestHead)
        /// Not an HTTP/1.x request; the reason goes into the 400 response.
        case invalid(String)
    }

    /// Parses `bytes` if they hold a whole request head (up to the first empty line).
    static func parse(_ bytes: [UInt8]) -> Parse {
        guard let end = headEnd(in: bytes) else { return .incomplete }
        var start = 0
        // RFC 9112 §2.2: ignore empty lines before the request line.
        while start < end, bytes[start] == UInt8(ascii: "\r") || bytes[start] == UInt8(ascii: "\n") { start += 1 }
        var lineEnd = start
        while lineEnd < end, bytes[lineEnd] != UInt8(ascii: "\r"), bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
        let parts = bytes[start..<lineEnd].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .invalid("the request line is not METHOD TARGET VERSION") }
        let method = parts[0], target = parts[1], version = parts[2]
        guard !method.isEmpty, method.count <= 32, method.allSatisfy(isTokenByte) else {
            return .invalid("the method is not a token")
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            return .invalid("only HTTP/1.0 and HTTP/1.1 are served")
        }
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .invalid("the target is not an absolute path")
        }
        let path = target.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        return .complete(HTTPRequestHead(method: String(decoding: method, as: UTF8.self), path: String(decoding: path, as: UTF8.self)))
    }

    /// The index just past the empty line that ends the head (`\r\n\r\n`, or a bare `\n\n`,
    /// which RFC 9112 allows a server to accept), or nil when it has not arrived.
    static func headEnd(in bytes: [UInt8]) -> Int? {
        var sawContent = false  // empty lines before the request line do not end the head
        var newlines = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "\n"):
                newlines += 1
                if newlines >= 2, sawContent { return index + 1 }
            case UInt8(ascii: "\r"):
                break
            default:
                newlines = 0
                sawContent = true
            }
        }
        return nil
    }

    /// `tchar` from RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
