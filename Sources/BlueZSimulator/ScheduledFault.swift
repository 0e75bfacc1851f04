/// A fault a scenario applies `at` simulated seconds after the simulator started.
public struct ScheduledFault: Codable, Sendable, Hashable {
    public var at: Double
    public var fault: FaultCommand

    public init(at: Double, fault: FaultCommand) {
        self.at = at
        self.fault = fault
    }
}
