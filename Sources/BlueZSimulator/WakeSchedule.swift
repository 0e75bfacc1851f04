/// When a measurement device that sleeps between measurements is awake: it wakes
/// `firstWakeAfter` seconds after the simulator starts, advertises for `awake` seconds, sleeps
/// `asleep` seconds, and so on (simulated seconds, scaled by `SimulatorTimings.timeScale` like
/// every other delay). It also wakes on demand (`BlueZSimulator.wake(address:)`, the control
/// interface's `Wake`). Asleep it neither advertises nor answers a connection attempt.
public struct WakeSchedule: Codable, Sendable, Hashable {
    public var awake: Double
    public var asleep: Double
    public var firstWakeAfter: Double

    public init(awake: Double = 30, asleep: Double = 180, firstWakeAfter: Double = 5) {
        self.awake = awake
        self.asleep = asleep
        self.firstWakeAfter = firstWakeAfter
    }

    /// Only on demand: the schedule's first wake is out of any test's reach.
    public static func onDemand(awake: Double = 30) -> WakeSchedule {
        WakeSchedule(awake: awake, asleep: 1e9, firstWakeAfter: 1e9)
    }

    /// Every key is optional in a scenario file: missing ones keep their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = WakeSchedule()
        awake = try c.decodeIfPresent(Double.self, forKey: .awake) ?? d.awake
        asleep = try c.decodeIfPresent(Double.self, forKey: .asleep) ?? d.asleep
        firstWakeAfter = try c.decodeIfPresent(Double.self, forKey: .firstWakeAfter) ?? d.firstWakeAfter
    }

    enum CodingKeys: String, CodingKey { case awake, asleep, firstWakeAfter }
}
