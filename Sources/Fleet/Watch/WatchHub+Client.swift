import CSocketSupport
import Glibc

// The writer thread's side of each client: its queue, its counters, and the nonblocking sends.
// Only the writer thread touches these objects, so they need no lock.

extension WatchHub {
    /// A record waiting for one or more clients, encoded when the first of them is sent it:
    /// a value that only a stalled client's queue holds is dropped without being encoded.
    /// Only the writer thread touches it.
    final class PendingRecord {
        private var value: ValuePipeline.Value?
        private var info: DeviceInfo?
        private var encoded: [UInt8]?

        init(value: ValuePipeline.Value, info: DeviceInfo?) {
            self.value = value
            self.info = info
        }

        init(encoded: [UInt8]) { self.encoded = encoded }

        func bytes(_ encoder: LiveValueEncoder) -> [UInt8] {
            if let encoded { return encoded }
            let bytes = value.map { encoder.encode($0, info: info) } ?? []
            encoded = bytes
            value = nil
            return bytes
        }
    }

    /// A client as the writer keeps it: only the writer thread touches it.
    final class Client {
        let id: UInt64
        let fd: Int32
        let filter: WatchFilter
        private var queue: [PendingRecord] = []
        private var head = 0
        var sent = 0
        var dropped = 0
        /// `dropped` rose since the client was last told.
        private var owesDropReport = false
        private(set) var dead = false

        init(_ registration: Registration) {
            id = registration.id
            fd = registration.fd
            filter = registration.filter
        }

        var backlogged: Bool { head < queue.count || owesDropReport }

        func enqueue(_ record: PendingRecord) {
            if queue.count - head >= filter.buffer {
                head += 1
                lose(1)
            }
            queue.append(record)
            if head > 4096, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
        }

        func lose(_ count: Int) {
            guard count > 0 else { return }
            dropped += count
            owesDropReport = true
        }

        /// Datagrams handed to the kernel per system call (CSocketSupport's most).
        private static let batch = 64

        /// Sends what the socket takes, never waiting: up to `batch` records per `sendmmsg`.
        func flush(_ encoder: LiveValueEncoder) {
            while !dead {
                if owesDropReport {
                    guard send(LiveStateRecord.droppedJSON(total: dropped)) else { return }
                    owesDropReport = false
                    continue
                }
                guard head < queue.count else { break }
                var records: [[UInt8]] = []
                records.reserveCapacity(min(Self.batch, queue.count - head))
                var index = head
                while index < queue.count, records.count < Self.batch {
                    let record = queue[index].bytes(encoder)
                    // Never sendable: lost, and said so.
                    guard record.count <= WatchHub.maximumRecordBytes else { break }
                    records.append(record)
                    index += 1
                }
                if records.isEmpty {
                    head += 1
                    lose(1)
                    continue
                }
                let count = sendBatch(records)
                head += count
                sent += count
                guard count == records.count else { return }
            }
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
        }

        /// How many of `records` went (0 when the socket is full, or the client is gone).
        private func sendBatch(_ records: [[UInt8]]) -> Int {
            let sent = Self.withBufferPointers(records) { buffers, lengths, count in
                wearfleet_send_datagrams(fd, buffers, lengths, UInt32(count))
            }
            if sent >= 0 { return Int(sent) }
            switch errno {
            case EAGAIN, EWOULDBLOCK, ENOBUFS, EINTR:
                return 0
            case EMSGSIZE:
                // The first record is larger than the socket can ever hold: lose it.
                lose(1)
                head += 1
                return 0
            default:
                dead = true
                return 0
            }
        }

        /// Calls `body` with a pointer to each record's bytes, their lengths and their count,
        /// every pointer valid for the whole call: each comes from its own
        /// `withUnsafeBufferPointer`, nested (a pointer taken out of such a closure is not valid
        /// after it returns), written into one temporary array of pointers.
        private static func withBufferPointers<Result>(
            _ records: [[UInt8]],
            _ body: (UnsafePointer<UnsafePointer<UInt8>?>?, UnsafePointer<UInt>?, Int) -> Result
        ) -> Result {
            let lengths = records.map { UInt($0.count) }
            return withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: records.count) { pointers in
                func nest(_ index: Int) -> Result {
                    guard index < records.count else {
                        return lengths.withUnsafeBufferPointer { body(UnsafePointer(pointers.baseAddress), $0.baseAddress, records.count) }
                    }
                    return records[index].withUnsafeBufferPointer { bytes in
                        pointers[index] = bytes.baseAddress
                        return nest(index + 1)
                    }
                }
                return nest(0)
            }
        }

        /// True when the datagram went; false when the socket is full (or the client is gone).
        private func send(_ bytes: [UInt8]) -> Bool {
            let result = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
            if result >= 0 { return true }
            switch errno {
            case EAGAIN, EWOULDBLOCK, ENOBUFS, EINTR:
                return false
            case EMSGSIZE:
                // Larger than the socket can ever hold: lose it rather than retry forever.
                lose(1)
                return true
            default:
                dead = true
                return false
            }
        }

        /// After `poll` said the socket is readable or hung up: the client never writes, so
        /// that is the end of it (end of file, an error, or a protocol violation: a client that
        /// writes would otherwise keep the socket readable and `poll` returning at once, the
        /// writer spinning for every client).
        func checkHangUp(_ events: Int16) {
            if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                dead = true
                return
            }
            if events & Int16(POLLIN) != 0 {
                var scratch = [UInt8](repeating: 0, count: 1)
                let count = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
                if count >= 0 || (errno != EAGAIN && errno != EINTR) { dead = true }
            }
        }
    }
}
