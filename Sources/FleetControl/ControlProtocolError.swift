/// A reply from the daemon that does not have the shape `org.wearfleet.Daemon1` documents.
public struct ControlProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }

    static func missing(_ key: String, in what: String) -> ControlProtocolError {
        ControlProtocolError("\(what) has no '\(key)'")
    }
}
