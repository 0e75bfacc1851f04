import CSocketSupport
import FleetCore
import Glibc

// The writer thread's side of each client: its queue, its counters, and the nonblocking sends.
// Only the writer thread touches these objects, so they need no lock.

extension WatchHub {
    /// One batch of items as the writer took them from `pending`, and their records: each
    /// written into the batch's one byte buffer when a client that keeps up is first sent it, so
    /// a batch costs a few allocations however many values it holds, and `sendmmsg` points
    /// straight into it. Lives for one pass of the writer: what a client's queue keeps is a
    /// `PendingRecord` of its own (`queued`), never the batch.
    final class RecordBatch {
        let items: [Item]
        private let devices: [DeviceID: DeviceInfo]
        private let devicesVersion: UInt64
        private var bytes: [UInt8] = []
        /// Where each item's record is in `bytes`; nil until a client is first sent it.
        private var spans: [Range<Int>?]
        /// Each item's record as the client queues hold it, made when the first of them takes it.
        private var pending: [PendingRecord?] = []

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
            if let span = spans[index] { return span }
            if bytes.isEmpty {
                // One allocation for a batch of up to `sendmmsg`'s worth, nearly always; a larger
                // one (a filter may take few of its items) grows as records are written.
                bytes.reserveCapacity(min(items.count, 64) * LiveValueEncoder.capacity(head: 160, bytes: 24))
            }
            let start = bytes.count
            switch items[index] {
            case .value(let value): encoder.append(value, devices: devices, version: devicesVersion, to: &bytes)
            case .state(_, let encoded): bytes.append(contentsOf: encoded)
            }
            spans[index] = start..<bytes.count
            // A client that is behind (earlier in the writer's order) queued the item before it was
            // written: its record takes these bytes, so the value is encoded once for all.
            if !pending.isEmpty, let queued = pending[index] { queued.adopt(bytes[start...]) }
            return start..<bytes.count
        }

        /// Item `index` as a client's queue keeps it: on its own, so that a client that is behind
        /// holds its records and nothing else of the batch (the other items, the buffer). Its bytes
        /// when a client was already sent it; otherwise the value and what the fleet knows of its
        /// device, encoded when a client is first sent it (a value a stalled client's full queue
        /// drops is never encoded). One per item, shared by every client that queues it.
        func queued(_ index: Int) -> PendingRecord {
            if pending.isEmpty { pending = Array(repeating: nil, count: items.count) }
            if let record = pending[index] { return record }
            let record: PendingRecord
            if let span = spans[index] {
                record = PendingRecord(encoded: Array(bytes[span]))
            } else {
                switch items[index] {
                case .value(let value): record = PendingRecord(value: value, info: devices[value.device])
                case .state(_, let encoded): record = PendingRecord(encoded: encoded)
                }
            }
            pending[index] = record
            return record
        }

        /// `body` with the batch's records (valid for the call only).
        func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            bytes.withUnsafeBufferPointer(body)
        }
    }

    /// A record waiting in one or more clients' queues, encoded when the first of them is sent
    /// it. Only the writer thread touches it.
    final class PendingRecord {
        private var value: ValuePipeline.Value?
        private var info: DeviceInfo?
        private var encoded: [UInt8]

        init(value: ValuePipeline.Value, info: DeviceInfo?) {
            self.value = value
            self.info = info
            encoded = []
        }

        init(encoded: [UInt8]) { self.encoded = encoded }

        /// The record's bytes, written for another client, if it was not encoded yet.
        func adopt(_ bytes: ArraySlice<UInt8>) {
            guard value != nil else { return }
            encoded = Array(bytes)
            value = nil
            info = nil
        }

        func bytes(_ encoder: LiveValueEncoder) -> [UInt8] {
            guard let value else { return encoded }
            encoded = encoder.encode(value, info: info)
            self.value = nil
            info = nil
            return encoded
        }
    }

    /// A client as the writer keeps it: only the writer thread touches it.
    final class Client {
        let id: UInt64
        let fd: Int32
        let filter: WatchFilter
        /// Records waiting, oldest first from `head`; a slot before it is emptied as its record
        /// leaves (sent or dropped), so nothing is held longer than the client's `buffer` allows.
        private var queue: [PendingRecord?] = []
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
                queue[head] = nil
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
            guard next < batch.items.count else { return }
            let accepted = (next..<batch.items.count).filter { batch.accepts($0, filter) }
            // More than the queue holds: the oldest of them would be dropped as the newest come,
            // so they are counted lost without being queued (the queue's own older records go
            // first, as the kept ones are enqueued).
            let kept = min(accepted.count, filter.buffer)
            lose(accepted.count - kept)
            for index in accepted.suffix(kept) { enqueue(batch.queued(index)) }
        }

        /// Sends the batch's accepted records in order, `batch` per call, until the socket is
        /// full or a record needs the queue's handling (one too large to send); returns the
        /// first item not dealt with (the batch's count: every one).
        private func sendDirectly(_ records: RecordBatch, _ encoder: LiveValueEncoder) -> Int {
            let count = records.items.count
            var next = 0
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: Self.batch) { chosen in
                withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: Self.batch) { spans in
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
                            spans[taken] = span
                            taken += 1
                            next += 1
                        }
                        guard taken > 0 else { return next }
                        switch Self.withRecordPointers(records, UnsafeBufferPointer(rebasing: spans[..<taken]), transmit) {
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
                    switch Self.withBufferPointers([LiveStateRecord.droppedJSON(total: dropped)], transmit) {
                    // The socket is full (or the client gone): it waits for room.
                    case .went(0): return
                    // Sent; or larger than the socket can ever hold, so not retried forever.
                    case .went, .firstTooLarge: owesDropReport = false
                    }
                    continue
                }
                guard head < queue.count else { break }
                var records: [[UInt8]] = []
                records.reserveCapacity(min(Self.batch, queue.count - head))
                while head + records.count < queue.count, records.count < Self.batch, let queued = queue[head + records.count] {
                    let record = queued.bytes(encoder)
                    // Never sendable: lost (below), and said so.
                    guard record.count <= WatchHub.maximumRecordBytes else { break }
                    records.append(record)
                }
                let outcome = records.isEmpty ? .firstTooLarge : Self.withBufferPointers(records, transmit)
                switch outcome {
                case .went(let went):
                    for slot in head..<head + went { queue[slot] = nil }
                    head += went
                    sent += went
                    // The socket is full: the rest waits for room.
                    guard went == records.count else { return }
                case .firstTooLarge:
                    queue[head] = nil
                    head += 1
                    lose(1)
                }
            }
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
        }

        private enum Outcome {
            /// How many went: all, or fewer when the socket is full (none when the client is
            /// gone: `dead`).
            case went(Int)
            /// The first is larger than the socket can ever hold: the caller loses it.
            case firstTooLarge
        }

        /// Sends `count` datagrams, `lengths[i]` bytes at `buffers[i]`.
        private func transmit(_ buffers: UnsafePointer<UnsafePointer<UInt8>?>?, _ lengths: UnsafePointer<UInt>?, _ count: Int) -> Outcome {
            let sent = wearfleet_send_datagrams(fd, buffers, lengths, UInt32(count))
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

        /// Calls `body` with a pointer to each of `spans`' records in `batch`'s buffer, their
        /// lengths and their count (valid for the call only: the spans are taken first, as
        /// writing a record may move the buffer).
        private static func withRecordPointers<Result>(
            _ batch: RecordBatch, _ spans: UnsafeBufferPointer<Range<Int>>, _ body: DatagramsBody<Result>
        ) -> Result {
            withDatagramVectors(spans.count) { pointers, lengths in
                batch.withBytes { bytes in
                    for (index, span) in spans.enumerated() {
                        // No buffer only while every record is empty.
                        pointers[index] = bytes.baseAddress.map { $0 + span.lowerBound }
                        lengths[index] = UInt(span.count)
                    }
                    return body(UnsafePointer(pointers.baseAddress), UnsafePointer(lengths.baseAddress), spans.count)
                }
            }
        }

        /// Calls `body` with a pointer to each record's bytes, their lengths and their count,
        /// every pointer valid for the whole call: each comes from its own
        /// `withUnsafeBufferPointer`, nested (a pointer taken out of such a closure is not valid
        /// after it returns). For the queue's records, each an array of its own.
        private static func withBufferPointers<Result>(_ records: [[UInt8]], _ body: DatagramsBody<Result>) -> Result {
            withDatagramVectors(records.count) { pointers, lengths in
                func nest(_ index: Int) -> Result {
                    guard index < records.count else {
                        return body(UnsafePointer(pointers.baseAddress), UnsafePointer(lengths.baseAddress), records.count)
                    }
                    return records[index].withUnsafeBufferPointer { bytes in
                        pointers[index] = bytes.baseAddress
                        lengths[index] = UInt(bytes.count)
                        return nest(index + 1)
                    }
                }
                return nest(0)
            }
        }

        /// What `transmit` takes: each datagram's bytes, their lengths, and how many.
        private typealias DatagramsBody<Result> = (UnsafePointer<UnsafePointer<UInt8>?>?, UnsafePointer<UInt>?, Int) -> Result

        /// Room on the stack for `count` datagrams' pointers and lengths.
        private static func withDatagramVectors<Result>(
            _ count: Int, _ body: (UnsafeMutableBufferPointer<UnsafePointer<UInt8>?>, UnsafeMutableBufferPointer<UInt>) -> Result
        ) -> Result {
            withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: count) { pointers in
                withUnsafeTemporaryAllocation(of: UInt.self, capacity: count) { lengths in body(pointers, lengths) }
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
