#if canImport(Glibc)
import Glibc
#endif

/// A state-store failure the daemon must act on (refuse to start, or report a failed save).
public enum StateStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The state directory cannot be created, entered, read or written.
    case directoryUnusable(path: String, reason: String)
    /// A save failed at `step` (`open`, `write`, `fsync`, `rename`, …); the previous file is intact.
    case writeFailed(path: String, step: String, errno: Int32)
    /// A bad file could not be renamed aside; it is left untouched and the store will not
    /// overwrite it.
    case cannotSetAside(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .directoryUnusable(let path, let reason): "state directory \(path) is not usable: \(reason)"
        case .writeFailed(let path, let step, let code): "saving \(path) failed at \(step): \(StateStoreError.text(code))"
        case .cannotSetAside(let path, let code): "cannot rename the bad state file \(path) aside: \(StateStoreError.text(code))"
        }
    }

    static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
