import CoreMetrics
import Prometheus

/// A Prometheus registry of its own and the swift-metrics factory that writes into it.
///
/// The fleet and adapter series are recorded through swift-metrics' `Counter` and `Gauge`,
/// created with this `factory` explicitly: nothing here touches the process-wide
/// `MetricsSystem`, so every daemon (and every test in one process) has its own registry. The
/// per-device families are not in the registry: their owner renders them at each scrape
/// (`exposition(adding:)`).
public final class PrometheusExporter: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// Creates the swift-metrics handlers of this registry.
    public let factory: any MetricsFactory
    private let helpByName: [String: String]
    private let histograms: Set<String>

    public init(families: [MetricFamily] = FleetMetricCatalogue.all) {
        factory = PrometheusMetricsFactory(registry: registry)
        helpByName = Dictionary(families.map { ($0.name, $0.help) }, uniquingKeysWith: { first, _ in first })
        histograms = Set(families.filter { $0.kind == .histogram }.map(\.name))
    }

    /// The exposition, text format 0.0.4, with `families` (rendered by their owner, not held in
    /// the registry) among the registry's: families sorted by name, each with one `# HELP` (from
    /// the catalogue; the registry writes none for metrics made through swift-metrics) and one
    /// `# TYPE` line; samples of counters and gauges sorted, histogram buckets in `le` order. A
    /// family without samples is left out, as the registry leaves out one without series.
    func exposition(adding families: [RenderedFamily]) -> [UInt8] {
        let text = registry.emitToBuffer()
        var blocks: [(name: String, lines: [ArraySlice<UInt8>])] = []
        for line in text.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: Self.typePrefix) {
                let name = line.dropFirst(Self.typePrefix.count).prefix { $0 != UInt8(ascii: " ") }
                blocks.append((String(decoding: name, as: UTF8.self), [line]))
            } else if !blocks.isEmpty {
                blocks[blocks.count - 1].lines.append(line)
            }
        }
        for rendered in families where !rendered.lines.isEmpty {
            let type = Array("# TYPE \(rendered.family.name) \(rendered.family.kind.rawValue)".utf8)
            blocks.append((rendered.family.name, [type[...]] + rendered.lines.map { $0[...] }))
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count + blocks.count * 120)
        for block in blocks.sorted(by: { $0.name < $1.name }) {
            if let help = helpByName[block.name] {
                output.append(contentsOf: "# HELP \(block.name) \(Self.escapeHelp(help))\n".utf8)
            }
            output.append(contentsOf: block.lines[0])
            output.append(UInt8(ascii: "\n"))
            var samples = Array(block.lines.dropFirst())
            if !histograms.contains(block.name) { samples.sort { $0.lexicographicallyPrecedes($1) } }
            for sample in samples {
                output.append(contentsOf: sample)
                output.append(UInt8(ascii: "\n"))
            }
        }
        return output
    }

    private static let typePrefix = Array("# TYPE ".utf8)

    /// HELP text escapes backslash and line feed (exposition format 0.0.4).
    static func escapeHelp(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
