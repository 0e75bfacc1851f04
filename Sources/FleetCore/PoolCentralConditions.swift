/// Conditions that hold for the whole fleet at once; when either is false no attempt is granted
/// and no eviction is asked for, because there is nothing that could carry them out.
public struct PoolCentralConditions: Hashable, Sendable {
    /// bluetoothd owns its bus name.
    public var bluetoothdPresent: Bool
    /// The engine has been started and is not stopping.
    public var engineRunning: Bool

    public init(bluetoothdPresent: Bool, engineRunning: Bool) {
        self.bluetoothdPresent = bluetoothdPresent
        self.engineRunning = engineRunning
    }

    public static let running = PoolCentralConditions(bluetoothdPresent: true, engineRunning: true)
}
