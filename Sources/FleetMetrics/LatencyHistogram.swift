/// A Prometheus histogram's figures kept as plain numbers: a count per bucket (not cumulative),
/// the sum and the count. Rendered cumulatively, with `+Inf`, by `DeviceFamilies`.
struct LatencyHistogram: Sendable {
    /// Upper bounds in seconds, ascending.
    let bounds: [Double]
    /// `counts[i]` observations fell in bucket `i` (above `bounds[i-1]`, at most `bounds[i]`);
    /// the last element counts those above every bound.
    private(set) var counts: [Int]
    private(set) var sum: Double = 0
    var count: Int { counts.reduce(0, +) }

    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    mutating func record(seconds: Double) {
        let index = bounds.firstIndex { seconds <= $0 } ?? bounds.count
        counts[index] += 1
        sum += seconds
    }

    /// (upper bound, observations at or below it), the last with bound +∞.
    var cumulative: [(bound: Double, count: Int)] {
        var running = 0
        return counts.indices.map { index in
            running += counts[index]
            return (index < bounds.count ? bounds[index] : .infinity, running)
        }
    }
}
