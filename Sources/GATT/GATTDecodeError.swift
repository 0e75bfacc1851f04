// Payloads come from a radio and are untrusted: every way a decoder can refuse one is listed
// here, with enough context (field and byte offset) to diagnose a device from a single log line.

/// Why a characteristic payload could not be decoded.
///
/// Decoders never trap and never return a value they could not read in full: they throw this
/// error instead. `field` is the snake_case name of the field being read (the same names as the
/// key/value rendering where there is one), `offset` the byte offset in the payload where the
/// field starts.
public struct GATTDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong at `offset`.
    public enum Reason: Hashable, Sendable {
        /// The field needs `needed` bytes but only `available` are left.
        case truncated(needed: Int, available: Int)
        /// The bytes of a string field are not well-formed UTF-8.
        case invalidUTF8
        /// The field was read in full but holds a value the specification does not allow.
        case outOfRange(value: UInt64)
    }

    public var field: String
    public var offset: Int
    public var reason: Reason

    public init(field: String, offset: Int, reason: Reason) {
        self.field = field
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .truncated(let needed, let available):
            "\(field) at offset \(offset): truncated, needs \(needed) byte(s), \(available) left"
        case .invalidUTF8:
            "\(field) at offset \(offset): invalid UTF-8"
        case .outOfRange(let value):
            "\(field) at offset \(offset): value \(value) out of range"
        }
    }
}
