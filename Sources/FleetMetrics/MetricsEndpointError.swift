import Glibc

/// Why the metrics endpoint could not start. Each case names the address, so the log line says
/// which `[metrics] listen` to fix.
public enum MetricsEndpointError: Error, CustomStringConvertible, Equatable {
    /// The host did not resolve to an address (`getaddrinfo`'s message).
    case unresolvable(address: String, reason: String)
    /// A socket call failed; `call` is the system call, `code` the errno.
    case socketFailed(address: String, call: String, code: Int32)

    /// The errno of a failed socket call (`EADDRINUSE` for a port in use), if that is the case.
    public var errorCode: Int32? {
        if case .socketFailed(_, _, let code) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .unresolvable(let address, let reason):
            "cannot listen on \(address): the host does not resolve (\(reason))"
        case .socketFailed(let address, let call, let code):
            "cannot listen on \(address): \(call) failed: \(String(cString: strerror(code)))"
        }
    }
}
