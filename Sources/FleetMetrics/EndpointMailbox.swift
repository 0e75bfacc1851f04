import CSocketSupport
import Glibc
import Synchronization

/// How render tasks hand finished responses to the endpoint's poll loop, and how anyone wakes
/// the loop: a self-pipe the loop polls. The write end is written and closed only under the
/// lock, so a task that finishes after `stop()` can never write to a reused descriptor.
final class EndpointMailbox: Sendable {
    private struct State {
        var responses: [UInt64: [UInt8]] = [:]
        var stopping = false
        var writeEnd: Int32
    }

    private let state: Mutex<State>
    /// Polled by the loop; closed by the owner after the loop has exited.
    let readEnd: Int32

    init() throws(MetricsEndpointError) {
        var fds: [Int32] = [-1, -1]
        guard wearfleet_pipe_cloexec_nonblock(&fds) == 0 else {
            throw .socketFailed(address: "(wake pipe)", call: "pipe2", code: errno)
        }
        readEnd = fds[0]
        state = Mutex(State(writeEnd: fds[1]))
    }

    /// A rendered response for connection `id`; dropped when the endpoint is stopping.
    func deliver(_ response: [UInt8], to id: UInt64) {
        state.withLock { state in
            guard !state.stopping else { return }
            state.responses[id] = response
            Self.wake(state.writeEnd)
        }
    }

    func takeResponses() -> [UInt64: [UInt8]] {
        state.withLock { state in
            defer { state.responses.removeAll() }
            return state.responses
        }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Asks the loop to exit and closes the write end. Returns false if already stopping.
    func stop() -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.stopping = true
            Self.wake(state.writeEnd)
            close(state.writeEnd)
            state.writeEnd = -1
            return true
        }
    }

    /// Empties the pipe (the loop calls this when it is readable).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }

    private static func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)  // EAGAIN: the pipe is full, so a wake-up is already pending
    }
}
