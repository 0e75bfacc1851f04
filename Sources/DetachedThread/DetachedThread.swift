import CSocketSupport
import Glibc

/// Starts a named, detached POSIX thread running `body`, at the process's own nice value.
///
/// For the daemon's few long-lived loops (a `poll()` over sockets) that must never sit on the
/// Swift concurrency pool. Foundation's `Thread` would do the same, but linking Foundation (not
/// just FoundationEssentials) maps its ICU data and libraries into the daemon (RSS figures: NOTES.md).
///
/// On Linux a nice value belongs to a thread, and a new thread inherits its creator's. The
/// concurrency runtime's worker threads run at nice values of their own (libdispatch maps QoS
/// classes to them: −2 and −4 seen here), so a loop started from a task would otherwise run at
/// whatever its creator had, not at what the service was given (systemd's `Nice=` sets the main
/// thread's). A raised priority is no gift for a loop that wakes per notification: it preempts
/// the sender on the same core, and the bus connection's and the socket poller's threads cost
/// ~10–25% more CPU per notification at −2 than at 0 (fleet-bench, same window as the C floors).
public enum DetachedThread {
    public struct StartError: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { "pthread_create failed: \(String(cString: strerror(code)))" }
    }

    /// - Parameter name: shown by `top -H` and in core dumps; Linux keeps the first 15 bytes.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        let box = Unmanaged.passRetained(Start(name: name, body: body))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            _ = wearfleet_name_current_thread(String(decoding: start.name.utf8.prefix(15), as: UTF8.self))
            // Best effort, and it can only fail one way: raising a thread's nice value is always
            // allowed, lowering it needs CAP_SYS_NICE. So a thread may keep a creator's higher
            // value (a lower priority), never a raised priority.
            _ = wearfleet_take_process_nice()
            start.body()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw StartError(code: result)
        }
        pthread_detach(thread)
    }

    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
