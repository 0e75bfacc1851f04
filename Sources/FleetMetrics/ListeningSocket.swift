import CSocketSupport
import Glibc

/// Opens the endpoint's listening socket: non-blocking, close-on-exec, `SO_REUSEADDR` (a
/// restarted daemon can bind while old connections sit in TIME_WAIT), IPv6 sockets v6-only (so
/// `[::1]` never also claims an IPv4 port).
enum ListeningSocket {
    static func open(_ address: ListenAddress, display: String, backlog: Int32 = 16) throws(MetricsEndpointError) -> Int32 {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(address: display, call: "socket", code: errno) }
        func fail(_ call: String) -> MetricsEndpointError {
            let code = errno
            close(fd)
            return .socketFailed(address: display, call: call, code: code)
        }
        var on: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw fail("setsockopt(SO_REUSEADDR)")
        }
        if address.family == AF_INET6 {
            guard setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw fail("setsockopt(IPV6_V6ONLY)")
            }
        }
        guard address.withSockaddr({ bind(fd, $0, $1) }) == 0 else { throw fail("bind") }
        guard listen(fd, backlog) == 0 else { throw fail("listen") }
        return fd
    }

    enum Accepted {
        case connection(Int32)
        /// Nothing pending (or the client left before we took it).
        case none
        /// Out of descriptors or memory: taking more now would fail again at once.
        case exhausted(Int32)
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket (atomically, with
    /// `accept4`: a child spawned at that moment by another thread must not inherit it, or the
    /// client would not see the connection close until that child exits).
    static func acceptConnection(_ listener: Int32) -> Accepted {
        let fd = wearfleet_accept_cloexec_nonblock(listener)
        if fd >= 0 { return .connection(fd) }
        switch errno {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .exhausted(errno)
        default: return .none  // EAGAIN, ECONNABORTED, EINTR, …
        }
    }
}
