import Dispatch
import FoundationEssentials
import Glibc

/// One `AcquireWrite` socket (SOCK_SEQPACKET: one datagram per write without response).
///
/// Sends never block a Swift-concurrency thread: they run on a serial dispatch queue, where a
/// full socket buffer is waited out with `poll(POLLOUT)` up to `sendTimeout` (that wait is the
/// fd path's backpressure; BlueZ gives none on the D-Bus path).
final class WriteSocket: Sendable {
    enum SendError: Error, Equatable {
        /// Larger than the link's MTU allows (BlueZ would truncate it).
        case tooLarge(size: Int, limit: Int)
        /// The buffer stayed full for `sendTimeout`.
        case timedOut
        /// The socket was closed (the link dropped) or failed with errno.
        case closed(errno: Int32)
    }

    private let descriptor: Int32
    /// Largest datagram: the ATT MTU minus the 3-byte write header.
    let maxPayload: Int
    private let queue: DispatchQueue
    private let sendTimeout: Duration

    /// Takes ownership of `descriptor`, closed in `deinit`.
    init(descriptor: Int32, mtu: UInt16, sendTimeout: Duration = .seconds(2), label: String) {
        self.descriptor = descriptor
        self.maxPayload = max(1, Int(mtu) - 3)
        self.queue = DispatchQueue(label: label)
        self.sendTimeout = sendTimeout
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    }

    deinit {
        close(descriptor)
    }

    func send(_ bytes: [UInt8]) async -> Result<Void, SendError> {
        guard bytes.count <= maxPayload else { return .failure(.tooLarge(size: bytes.count, limit: maxPayload)) }
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.sendNow(bytes)) }
        }
    }

    private func sendNow(_ bytes: [UInt8]) -> Result<Void, SendError> {
        let deadline = ContinuousClock.now + sendTimeout
        while true {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent >= 0 { return .success(()) }
            let error = errno
            guard error == EAGAIN || error == EWOULDBLOCK || error == EINTR else { return .failure(.closed(errno: error)) }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .failure(.timedOut) }
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            _ = poll(&entry, 1, milliseconds)
            if entry.revents & Int16(POLLHUP | POLLERR) != 0 { return .failure(.closed(errno: EPIPE)) }
        }
    }
}
