import Foundation

/// A small, fast, seedable generator (SplitMix64), so a scenario run with the same `--seed`
/// produces the same addresses, RSSI walks, payloads and fault draws.
///
/// Each device owns its own generator (seeded from the fleet seed and its index), so one
/// device's draws do not depend on how other devices' tasks interleave.
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

    /// A generator for item `index` of a fleet seeded with `seed`.
    public static func derived(from seed: UInt64, index: Int) -> SeededRandom {
        var mixer = SeededRandom(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return SeededRandom(seed: mixer.next())
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// An exponentially distributed delay with the given mean (for link drops).
    public mutating func exponential(mean: Double) -> Double {
        -mean * log1p(-unit())
    }
}
