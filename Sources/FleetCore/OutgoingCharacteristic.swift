/// The characteristic an outgoing write goes to, as the scheduler needs it: a stable identity
/// (the runtime chooses it, e.g. the BlueZ object path) and its write flags.
public struct OutgoingCharacteristic: Hashable, Sendable, CustomStringConvertible {
    public var id: String
    public var properties: OutgoingWriteProperties

    public init(id: String, properties: OutgoingWriteProperties) {
        self.id = id
        self.properties = properties
    }

    public var description: String { id }
}
