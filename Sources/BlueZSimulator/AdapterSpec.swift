/// One simulated controller (`hciN`) as a scenario describes it.
public struct AdapterSpec: Codable, Sendable, Hashable {
    /// `hci0`, `hci1`, …
    public var name: String
    /// The controller's public address; generated from the seed when absent.
    public var address: String?
    /// How many LE connections the controller holds at once (5 is common).
    public var slots: Int?
    public var powered: Bool?

    public init(name: String, address: String? = nil, slots: Int? = nil, powered: Bool? = nil) {
        self.name = name
        self.address = address
        self.slots = slots
        self.powered = powered
    }
}
