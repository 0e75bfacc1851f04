/// Wearables that walk past the gateway: one arrives every `1 / perSecond` simulated seconds,
/// advertises for `dwell` seconds, and leaves for good. Each has an address of its own (random
/// static), so `count` passers-by are `count` distinct devices: bluetoothd makes a temporary
/// object for each while discovering and drops it TemporaryTimeout after it was last heard.
/// What a daemon keeps of them once they are gone is what a churn measurement looks for.
public struct PassersBy: Codable, Sendable, Hashable {
    /// How many pass in all.
    public var count: Int
    /// Arrivals per simulated second.
    public var perSecond: Double
    /// Simulated seconds each one is in range (advertising, connectable).
    public var dwell: Double
    /// What they are (default: heart-rate straps).
    public var kind: WearableKind?
    /// Simulated seconds after the simulator started before the first one comes (default 0).
    public var startAfter: Double?

    public init(count: Int, perSecond: Double, dwell: Double, kind: WearableKind? = nil, startAfter: Double? = nil) {
        self.count = count
        self.perSecond = perSecond
        self.dwell = dwell
        self.kind = kind
        self.startAfter = startAfter
    }

    /// The `index`th passer-by's address: random static (the two top bits set), `C5` first, the
    /// index in the last four bytes and `variant` in the second (another variant is tried when a
    /// scenario device already has the address).
    static func address(_ index: Int, variant: UInt8 = 0) -> String {
        let bytes: [UInt8] = [0xC5, variant] + (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * (3 - $0))) }
        return bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }
}
