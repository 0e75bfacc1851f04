/// The kinds of wearable the simulator can play.
public enum WearableKind: String, Codable, Sendable, CaseIterable {
    /// A chest strap: heart rate with RR intervals at ~1 Hz, battery, device information.
    case heartRateStrap = "heart-rate-strap"
    /// A watch: heart rate, battery, temperature, SpO2, device information.
    case watch
    /// A motion band: a custom 128-bit service streaming 50–200 Hz notifications of up to
    /// MTU−3 bytes, and a control characteristic (write without response, replies by notification).
    case motionBand = "motion-band"
    /// A blood-pressure cuff: Blood Pressure (measurements by indication, feature), Current Time,
    /// battery, device information. It pairs by passkey, and its measurements and clock want an
    /// encrypted link. Usually asleep: it wakes to measure (`DeviceSpec.wake`).
    case bloodPressureCuff = "blood-pressure-cuff"
    /// A weight scale: Weight Scale (measurements by indication, feature), Current Time, battery,
    /// device information. Just Works pairing; encrypted link wanted as for the cuff.
    case weightScale = "weight-scale"

    /// The kinds that stream while connected, which `Scenario.quick` cycles through (the
    /// measurement devices wake and sleep, so a quick fleet leaves them out).
    public static let streamingKinds: [WearableKind] = [.heartRateStrap, .watch, .motionBand]

    /// Blood-pressure cuffs and scales: they keep measurements in a queue and indicate them when
    /// a client enables indications (`BlueZSimulator+Measurement.swift`).
    public var isMeasurementDevice: Bool { self == .bloodPressureCuff || self == .weightScale }

    /// How the kind pairs when the scenario does not say: a cuff displays a passkey, a scale has
    /// no display to show one.
    public var defaultPairing: PairingMethod { self == .bloodPressureCuff ? .passkey : .justWorks }

    /// The ATT MTU such a device typically negotiates with BlueZ.
    public var defaultMTU: UInt16 {
        switch self {
        case .heartRateStrap: return 23
        case .watch: return 185
        case .motionBand: return 247
        case .bloodPressureCuff, .weightScale: return 23
        }
    }

    var namePrefix: String {
        switch self {
        case .heartRateStrap: return "HRM-Strap"
        case .watch: return "Watch"
        case .motionBand: return "MotionBand"
        case .bloodPressureCuff: return "BP-Cuff"
        case .weightScale: return "Scale"
        }
    }
}
