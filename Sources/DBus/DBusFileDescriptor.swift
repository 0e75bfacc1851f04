
import Glibc

import Synchronization

/// A UNIX file descriptor carried in a D-Bus message (type `h`), with explicit ownership.
///
/// Ownership rules:
/// - A descriptor *received* from the bus is a duplicate owned by this object: it is closed when
///   the object is released, unless `take()` moved it to the caller first.
/// - To *send* a descriptor, wrap it with `init(borrowing:)`: libdbus duplicates it while the
///   message is built, so the caller keeps (and still closes) its own descriptor.
/// Instances compare by identity: two wrappers are equal only if they are the same object.
public final class DBusFileDescriptor: Hashable, Sendable, CustomStringConvertible {
    private let state: Mutex<Int32?>
    private let owned: Bool

    /// Wraps a descriptor this object now owns and will close.
    public init(owning fd: Int32) {
        state = Mutex(fd)
        owned = true
    }

    /// Wraps a descriptor the caller keeps owning (used for sending).
    public init(borrowing fd: Int32) {
        state = Mutex(fd)
        owned = false
    }

    /// The descriptor number while it is still held here, or nil after `take()`/`close()`.
    public var rawValue: Int32? { state.withLock { $0 } }

    /// Moves the descriptor out: the caller must close it. Returns nil if already taken.
    public func take() -> Int32? {
        state.withLock { fd in
            defer { fd = nil }
            return fd
        }
    }

    /// Closes an owned descriptor now rather than on release. Borrowed ones are only forgotten.
    public func close() {
        guard let fd = take(), owned else { return }
        _ = Glibc.close(fd)
    }

    deinit {
        if owned, let fd = state.withLock({ $0 }) {
            _ = Glibc.close(fd)
        }
    }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { rawValue.map { "fd \($0)" } ?? "fd (closed)" }
}
