import Foundation
import Synchronization

/// The simulator's end of an AcquireWrite socket: a thread reads each datagram the client
/// writes and hands it to `onPacket`; `onClose` runs once when the client closes its end.
///
/// Datagrams over 512 bytes are truncated to 512, as bluetoothd's ATT layer does.
/// `stop()` wakes the thread (shutdown), which then closes the descriptor itself, so the
/// descriptor is never closed while the thread still polls it.
final class WriteSocketReader: Sendable {
    private struct State {
        var fd: Int32
        var closed = false
    }

    private let state: Mutex<State>

    init(fd: Int32, onPacket: @escaping @Sendable ([UInt8]) -> Void, onClose: @escaping @Sendable () -> Void) {
        state = Mutex(State(fd: fd))
        let thread = Thread { [self] in
            self.run(fd: fd, onPacket: onPacket)
            onClose()
        }
        thread.name = "bluez-sim-write"
        thread.start()
    }

    private func run(fd: Int32, onPacket: @Sendable ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        loop: while true {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            switch count {
            case 0: break loop
            case ..<0:
                if errno == EAGAIN || errno == EINTR { continue }
                break loop
            default:
                onPacket(Array(buffer[0..<min(count, 512)]))
            }
        }
        state.withLock { state in
            state.closed = true
            _ = Glibc.close(state.fd)
        }
    }

    /// Ends reading; the client sees its socket hang up.
    func stop() {
        state.withLock { state in
            guard !state.closed else { return }
            _ = shutdown(state.fd, Int32(SHUT_RDWR))
        }
    }
}
