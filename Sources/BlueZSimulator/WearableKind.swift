/// The kinds of wearable the simulator can play.
public enum WearableKind: String, Codable, Sendable, CaseIterable {
    /// A chest strap: heart rate with RR intervals at ~1 Hz, battery, device information.
    case heartRateStrap = "heart-rate-strap"
    /// A watch: heart rate, battery, temperature, SpO2, device information.
    case watch
    /// A motion band: a custom 128-bit service streaming 50–200 Hz notifications of up to
    /// MTU−3 bytes, and a control characteristic (write without response, replies by notification).
    case motionBand = "motion-band"

    /// The ATT MTU such a device typically negotiates with BlueZ.
    public var defaultMTU: UInt16 {
        switch self {
        case .heartRateStrap: return 23
        case .watch: return 185
        case .motionBand: return 247
        }
    }

    var namePrefix: String {
        switch self {
        case .heartRateStrap: return "HRM-Strap"
        case .watch: return "Watch"
        case .motionBand: return "MotionBand"
        }
    }
}
