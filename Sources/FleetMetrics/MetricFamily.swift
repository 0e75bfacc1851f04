/// One metric family as scrapers see it: its name, Prometheus type, the labels of its series
/// (in the order they are written) and the `# HELP` text. `FleetMetricCatalogue` lists them all.
public struct MetricFamily: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public let name: String
    public let kind: Kind
    public let labels: [String]
    public let help: String

    public init(_ name: String, _ kind: Kind, labels: [String] = [], help: String) {
        self.name = name
        self.kind = kind
        self.labels = labels
        self.help = help
    }
}
