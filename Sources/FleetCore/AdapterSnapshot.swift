/// What the pool policy needs to know about one local adapter at the moment of a decision.
///
/// An adapter that is not powered offers no slots and receives no attempts; its slot count comes
/// from `PoolConfiguration.slots(for:)`.
public struct AdapterSnapshot: Hashable, Sendable {
    public var id: AdapterID
    public var isPowered: Bool

    public init(id: AdapterID, isPowered: Bool) {
        self.id = id
        self.isPowered = isPowered
    }
}
