import CSocketSupport
import FleetCore
import Glibc

// The writer thread's side of each client: its queue, its counters, and the nonblocking sends.
// Only the writer thread touches these objects, so they need no lock.

extension WatchHub {
    /// One batch of items as the writer took them from `pending`, and their records: each
    /// written into the batch's one byte buffer when a client is first sent it (a value that only
    /// a stalled client's full queue holds is dropped without being encoded), so a batch costs a
    /// few allocations however many values it holds, and `sendmmsg` points straight into it.
    /// Kept by the client queues that hold its records; only the writer thread touches it.
    final class RecordBatch {
        let items: [Item]
        private let devices: [DeviceID: DeviceInfo]
        private let devicesVersion: UInt64
        private var bytes: [UInt8] = []
        /// Where each item's record is in `bytes`; nil until a client is first sent it.
        private var spans: [Range<Int32>?]

        init(items: [Item], devices: [DeviceID: DeviceInfo], devicesVersion: UInt64) {
            self.items = items
            self.devices = devices
            self.devicesVersion = devicesVersion
            spans = Array(repeating: nil, count: items.count)
        }

        /// Whether a client with `filter` takes item `index`.
        func accepts(_ index: Int, _ filter: WatchFilter) -> Bool {
            // The common filter, every value, decided by the item's case alone (binding the value
            // would copy it, and each of its references be retained and released).
            if filter.takesEveryValue, case .value = items[index] { return true }
            return switch items[index] {
            case .value(let value): filter.accepts(device: value.device, characteristic: value.characteristic)
            case .state(let device, _): filter.acceptsState(of: device)
            }
        }

        /// Item `index`'s record in `bytes`, written there first if no client was sent it yet.
        func record(_ index: Int, _ encoder: LiveValueEncoder) -> Range<Int> {
            if let span = spans[index] { return Int(span.lowerBound)..<Int(span.upperBound) }
            if bytes.isEmpty {
                // One allocation for the batch, nearly always: every item's record fits.
                bytes.reserveCapacity(items.count * LiveValueEncoder.capacity(head: 160, bytes: 24))
            }
            let start = bytes.count
            switch items[index] {
            case .value(let value): encoder.append(value, devices: devices, version: devicesVersion, to: &bytes)
            case .state(_, let encoded): bytes.append(contentsOf: encoded)
            }
            spans[index] = Int32(start)..<Int32(bytes.count)
            return start..<bytes.count
        }

        /// `body` with the batch's records (valid for the call only).
        func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            bytes.withUnsafeBufferPointer(body)
        }
    }

    /// One of a batch's records in a client's queue.
    struct QueuedRecord {
        let batch: RecordBatch
        let item: Int
    }

    /// A client as the writer keeps it: only the writer thread touches it.
    final class Client {
        let id: UInt64
        let fd: Int32
        let filter: WatchFilter
        private var queue: [QueuedRecord] = []
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

        func enqueue(_ record: QueuedRecord) {
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

        /// Takes the records of `batch` this client's filter accepts: a client that keeps up
        /// (nothing of its own waits) is sent them straight from the batch; what its socket does
        /// not take, and everything for a client that is behind, joins its queue.
        func take(_ batch: RecordBatch, _ encoder: LiveValueEncoder) {
            guard !dead else { return }
            let next = backlogged ? 0 : sendDirectly(batch, encoder)
            for index in next..<batch.items.count where batch.accepts(index, filter) {
                enqueue(QueuedRecord(batch: batch, item: index))
            }
        }

        /// Sends the batch's accepted records in order, `batch` per call, until the socket is
        /// full or a record needs the queue's handling (one too large to send); returns the
        /// first item not dealt with (the batch's count: every one).
        private func sendDirectly(_ records: RecordBatch, _ encoder: LiveValueEncoder) -> Int {
            let count = records.items.count
            var next = 0
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: Self.batch) { chosen in
                withUnsafeTemporaryAllocation(of: Outgoing.self, capacity: Self.batch) { outgoing in
                    while next < count, !dead {
                        var taken = 0
                        while next < count, taken < Self.batch {
                            guard records.accepts(next, filter) else {
                                next += 1
                                continue
                            }
                            let span = records.record(next, encoder)
                            // Lost, and said so before the records after it: the queue does both.
                            guard span.count <= WatchHub.maximumRecordBytes else { break }
                            chosen[taken] = next
                            outgoing[taken] = Outgoing(batch: Unmanaged.passUnretained(records), span: span)
                            taken += 1
                            next += 1
                        }
                        guard taken > 0 else { return next }
                        switch transmit(UnsafeBufferPointer(rebasing: outgoing[..<taken])) {
                        case .went(let went):
                            sent += went
                            // The socket is full: the rest waits in the queue.
                            if went < taken { return chosen[went] }
                        case .firstTooLarge:
                            // Lost; the rest goes through the queue, after the client is told.
                            lose(1)
                            return chosen[0] + 1
                        }
                    }
                    return dead ? count : next
                }
            }
        }

        /// Sends what the socket takes of the queue, never waiting: up to `batch` records per
        /// `sendmmsg`.
        func flush(_ encoder: LiveValueEncoder) {
            while !dead {
                if owesDropReport {
                    guard send(LiveStateRecord.droppedJSON(total: dropped)) else { return }
                    owesDropReport = false
                    continue
                }
                guard head < queue.count else { break }
                let (taken, outcome) = withUnsafeTemporaryAllocation(of: Outgoing.self, capacity: Self.batch) { outgoing in
                    var taken = 0
                    while head + taken < queue.count, taken < Self.batch {
                        let queued = queue[head + taken]
                        let span = queued.batch.record(queued.item, encoder)
                        // Never sendable: lost (below), and said so.
                        guard span.count <= WatchHub.maximumRecordBytes else { break }
                        // The queue holds the batch until the record leaves it.
                        outgoing[taken] = Outgoing(batch: Unmanaged.passUnretained(queued.batch), span: span)
                        taken += 1
                    }
                    return (taken, taken == 0 ? .firstTooLarge : transmit(UnsafeBufferPointer(rebasing: outgoing[..<taken])))
                }
                switch outcome {
                case .went(let went):
                    head += went
                    sent += went
                    // The socket is full: the rest waits for room.
                    guard went == taken else { return }
                case .firstTooLarge:
                    head += 1
                    lose(1)
                }
            }
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
        }

        /// One record about to be sent: its batch (kept by whoever chose the record, for the whole
        /// send: unretained here) and where its bytes are in it.
        private struct Outgoing {
            let batch: Unmanaged<RecordBatch>
            let span: Range<Int>
        }

        private enum Outcome {
            /// How many went: all, or fewer when the socket is full (none when the client is
            /// gone: `dead`).
            case went(Int)
            /// The first is larger than the socket can ever hold: the caller loses it.
            case firstTooLarge
        }

        private func transmit(_ records: UnsafeBufferPointer<Outgoing>) -> Outcome {
            let sent = Self.withRecordPointers(records) { buffers, lengths, count in
                wearfleet_send_datagrams(fd, buffers, lengths, UInt32(count))
            }
            if sent >= 0 { return .went(Int(sent)) }
            switch errno {
            case EAGAIN, EWOULDBLOCK, ENOBUFS, EINTR:
                return .went(0)
            case EMSGSIZE:
                return .firstTooLarge
            default:
                dead = true
                return .went(0)
            }
        }

        /// Calls `body` with a pointer to each record's bytes, their lengths and their count,
        /// every pointer valid for the whole call: the records of one batch share its buffer,
        /// and each batch's buffer is opened by its own `withBytes`, nested (a pointer taken out
        /// of such a closure is not valid after it returns). A client that keeps up gets every
        /// record from one or two batches.
        private static func withRecordPointers<Result>(
            _ records: UnsafeBufferPointer<Outgoing>,
            _ body: (UnsafePointer<UnsafePointer<UInt8>?>?, UnsafePointer<UInt>?, Int) -> Result
        ) -> Result {
            withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: records.count) { pointers in
                withUnsafeTemporaryAllocation(of: UInt.self, capacity: records.count) { lengths in
                    // From `offset` on: the run of records sharing the batch of the first.
                    func nest(_ offset: Int) -> Result {
                        guard offset < records.count else {
                            return body(UnsafePointer(pointers.baseAddress), UnsafePointer(lengths.baseAddress), records.count)
                        }
                        let batch = records[offset].batch
                        var end = offset
                        while end < records.count, records[end].batch.toOpaque() == batch.toOpaque() { end += 1 }
                        return batch.takeUnretainedValue().withBytes { bytes in
                            for index in offset..<end {
                                // No buffer yet only while every record so far is empty.
                                pointers[index] = bytes.baseAddress.map { $0 + records[index].span.lowerBound }
                                lengths[index] = UInt(records[index].span.count)
                            }
                            return nest(end)
                        }
                    }
                    return nest(0)
                }
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
