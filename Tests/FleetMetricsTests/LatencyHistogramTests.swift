import FleetCore
@testable import FleetMetrics
import Testing
import TestSupport

@Suite("The ready-latency histogram's figures")
struct LatencyHistogramTests {
    /// 0 to 200 s, a quarter of them exactly on a bucket bound; seeded, so a failure names the
    /// seed that shows it.
    static func seconds(bounds: [Double], _ random: inout SeededRandom) -> Double {
        if random.next() % 4 == 0 { return bounds[Int(random.next() % UInt64(bounds.count))] }
        return Double(random.next() % 200_000_000) / 1e6
    }

    @Test(arguments: 0..<200 as Range<UInt64>)
    func everyBucketCountsTheObservationsAtOrBelowItsBound(seed: UInt64) {
        let bounds = FleetMetricCatalogue.readyLatencyBuckets.map(\.secondsDouble)
        var histogram = LatencyHistogram(bounds: bounds)
        var random = SeededRandom(seed: seed)
        var observed: [Double] = []
        for _ in 0..<Int(random.next() % 50) {
            let seconds = Self.seconds(bounds: bounds, &random)
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
