@testable import FleetMetrics
import Testing

@Suite("The ready-latency histogram's figures")
struct LatencyHistogramTests {
    /// A small deterministic generator, so a failure names the seed that shows it.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// 0 to 200 s, a quarter of them exactly on a bucket bound.
        mutating func seconds(bounds: [Double]) -> Double {
            if next() % 4 == 0 { return bounds[Int(next() % UInt64(bounds.count))] }
            return Double(next() % 200_000_000) / 1e6
        }
    }

    @Test(arguments: 0..<200 as Range<UInt64>)
    func everyBucketCountsTheObservationsAtOrBelowItsBound(seed: UInt64) {
        let bounds = FleetMetricCatalogue.readyLatencyBuckets.map(\.secondsDouble)
        var histogram = LatencyHistogram(bounds: bounds)
        var random = SplitMix(state: seed)
        var observed: [Double] = []
        for _ in 0..<Int(random.next() % 50) {
            let seconds = random.seconds(bounds: bounds)
            observed.append(seconds)
            histogram.record(seconds: seconds)
        }
        let cumulative = histogram.cumulative
        #expect(cumulative.map(\.bound) == bounds + [.infinity])
        for (bound, count) in cumulative {
            #expect(count == observed.filter { $0 <= bound }.count, "seed \(seed), le \(bound)")
        }
        #expect(histogram.count == observed.count)
        #expect(abs(histogram.sum - observed.reduce(0, +)) < 1e-6)
    }

    @Test func specialValuesUseTheExpositionSpelling() {
        #expect(ExpositionSample.value(Double.infinity) == "+Inf")
        #expect(ExpositionSample.value(-Double.infinity) == "-Inf")
        #expect(ExpositionSample.value(Double.nan) == "NaN")
        #expect(ExpositionSample.value(2.5) == "2.5")
        #expect(ExpositionSample.value(1.0) == "1.0")
    }
}
