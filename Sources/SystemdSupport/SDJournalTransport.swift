import CSystemd

/// Sends entries with libsystemd's `sd_journal_sendv` to `/run/systemd/journal/socket`.
///
/// libsystemd handles what a hand-written client gets wrong: entries larger than a datagram
/// (it passes them in a sealed memfd), `EAGAIN`, and a missing journald (returns silently). The
/// shim defines `SD_JOURNAL_SUPPRESS_LOCATION`, so `CODE_*` come from the Swift caller.
public struct SDJournalTransport: JournalTransport {
    public init() {}

    @discardableResult
    public func send(_ fields: [JournalField]) -> Int32 {
        guard !fields.isEmpty else { return 0 }
        // One buffer holds every `NAME=value`; the iovecs point into it. sd_journal_sendv takes
        // values with newlines in this form too (it re-encodes them for the wire).
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(fields.count)
        for field in fields {
            let start = buffer.count
            buffer.append(contentsOf: field.name.utf8)
            buffer.append(UInt8(ascii: "="))
            buffer.append(contentsOf: field.value)
            ranges.append(start..<buffer.count)
        }
        return buffer.withUnsafeMutableBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var vectors = ranges.map { range in
                iovec(iov_base: base + range.lowerBound, iov_len: range.count)
            }
            return vectors.withUnsafeMutableBufferPointer { iov in
                sd_journal_sendv(iov.baseAddress, Int32(iov.count))
            }
        }
    }
}
