import DeterministicRandom
import Foundation

extension SeededRandom {
    /// An exponentially distributed delay with the given mean (for link drops).
    mutating func exponential(mean: Double) -> Double {
        -mean * log1p(-unit())
    }
}
