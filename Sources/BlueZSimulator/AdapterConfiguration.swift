/// A simulated controller with every value decided.
public struct AdapterConfiguration: Sendable, Hashable {
    public var name: String
    public var address: String
    public var slots: Int
    public var powered: Bool
}
