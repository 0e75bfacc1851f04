/// One adapter as the control interface reports it (an entry of `GetStatus`'s `Adapters`).
public struct ControlAdapter: Sendable, Hashable {
    /// The kernel name, `hci0`.
    public var id: String
    public var powered: Bool
    /// LE connection slots the daemon may use on it.
    public var slots: UInt32
    /// Slots in use: links plus connection attempts in flight.
    public var used: UInt32
    public var discovering: Bool

    public init(id: String, powered: Bool, slots: UInt32, used: UInt32, discovering: Bool) {
        self.id = id
        self.powered = powered
        self.slots = slots
        self.used = used
        self.discovering = discovering
    }
}
