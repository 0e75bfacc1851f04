/// Where a simulated device's link stands.
enum LinkState: Sendable, Equatable {
    case disconnected
    case connecting
    /// Connected; GATT not yet resolved.
    case connected
    /// Connected and `ServicesResolved`.
    case resolved

    var isUp: Bool { self == .connected || self == .resolved }
}
