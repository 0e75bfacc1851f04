import Glibc

/// A resolved socket address to listen on (IPv4 or IPv6), with the numeric spelling used in
/// logs (`127.0.0.1:9468`, `[::1]:9468`).
struct ListenAddress: Sendable {
    let storage: sockaddr_storage
    let length: socklen_t

    var family: Int32 { Int32(storage.ss_family) }

    /// Resolves `host` (a literal address or a name) and `port` for a passive TCP socket; the
    /// first address returned is used.
    static func resolve(host: String, port: Int) throws(MetricsEndpointError) -> ListenAddress {
        let display = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard (0...65535).contains(port) else {
            throw .unresolvable(address: display, reason: "port out of range")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw .unresolvable(address: display, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(results) }
        guard let address = first.pointee.ai_addr, Int(first.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size else {
            throw .unresolvable(address: display, reason: "no usable address")
        }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(first.pointee.ai_addrlen)))
        }
        return ListenAddress(storage: storage, length: first.pointee.ai_addrlen)
    }

    /// The address a socket is bound to (`getsockname`): how port 0 learns its port.
    static func bound(to fd: Int32) -> ListenAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? ListenAddress(storage: storage, length: length) : nil
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// The numeric host, without brackets (`127.0.0.1`, `::1`).
    var host: String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withSockaddr { address, length in
            getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
        }
        guard status == 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var port: Int {
        switch family {
        case AF_INET:
            withSockaddr { address, _ in
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            withSockaddr { address, _ in
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default: 0
        }
    }

    /// `127.0.0.1:9468` or `[::1]:9468`.
    var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether only this machine can connect: 127.0.0.0/8, `::1`, or an IPv4-mapped 127.x.
    var isLoopback: Bool {
        switch family {
        case AF_INET:
            return withSockaddr { address, _ in
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127
                }
            }
        case AF_INET6:
            let bytes: [UInt8] = withSockaddr { address, _ in
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            }
            let loopback = bytes == [UInt8](repeating: 0, count: 15) + [1]
            let mappedLoopback = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            return loopback || mappedLoopback
        default:
            return false
        }
    }
}
