import CSocketSupport
import Glibc

/// Starts a named, detached POSIX thread running `body`.
///
/// For the daemon's few long-lived loops (a `poll()` over sockets) that must never sit on the
/// Swift concurrency pool. Foundation's `Thread` would do the same, but linking Foundation (not
/// just FoundationEssentials) maps its ICU data and libraries into the daemon: ~8 MB of RSS.
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
