// Encoders refuse values that the wire format cannot carry rather than truncating them, so that a
// command sent to a device always means what the caller asked for.

/// A value that cannot be represented in the characteristic's wire format.
public struct GATTEncodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The snake_case name of the field that could not be encoded.
    public var field: String
    /// Why, in words.
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
