// Randomness must be reproducible: FleetCore's jitter takes an `inout some RandomNumberGenerator`
// (tests and the runtime's device actors pass this one, seeded), and the simulator draws its
// addresses, RSSI walks, payloads and faults from it, so a run with the same seed repeats.

/// SplitMix64: a tiny, fast, well-distributed generator with a 64-bit seed. Not for secrets.
///
/// Guarantees: the sequence depends on the seed alone (the same seed gives the same numbers on
/// every platform and in every process), and a value of this type is independent of every other
/// (it is a value: copying it forks the sequence).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for item `index` of a set seeded with `seed` (the simulator gives each device
    /// its own, so one device's draws do not depend on how other devices' tasks interleave).
    public static func derived(from seed: UInt64, index: Int) -> SeededRandom {
        var mixer = SeededRandom(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return SeededRandom(seed: mixer.next())
    }

    /// Uniform in [0, 1), from the top 53 bits of one draw.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
