import Foundation

/// One line of the result: the same figure for the Swift library and the C baseline.
struct Figure: Codable {
    let name: String
    let unit: String
    let swift: Double
    let c: Double
    let higherIsBetter: Bool

    /// Swift ÷ C: above 1 is better for rates, below 1 is better for costs.
    var ratio: Double { c != 0 ? swift / c : .nan }
}

enum Report {
    static func table(_ figures: [Figure]) -> String {
        let header = ["figure", "Swift", "C baseline", "Swift/C"]
        let rows = figures.map { figure in
            [figure.name + " (\(figure.unit))", format(figure.swift), format(figure.c), String(format: "%.2f", figure.ratio)]
        }
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    /// The issue's acceptance test: Swift's ingest CPU per signal within 2× of the C baseline's.
    static func verdict(_ figures: [Figure]) -> (passed: Bool, text: String) {
        guard let cpu = figures.first(where: { $0.name == "receiver CPU per signal" }) else { return (false, "no ingest figure") }
        let passed = cpu.ratio <= 2
        return (passed, String(format: "signal ingest CPU per signal: Swift %.1f µs vs C %.1f µs = %.2f× (limit 2×): %@",
                               cpu.swift, cpu.c, cpu.ratio, passed ? "PASS" : "FAIL"))
    }

    static func json(_ figures: [Figure], options: Options) throws -> Data {
        struct Document: Codable {
            let figures: [Figure]
            let ratios: [String: Double]
            let signalsPerRun: Int
            let secondsPerRoundTripRun: Double
            let repeats: Int
            let ingestWithin2x: Bool
        }
        let document = Document(
            figures: figures, ratios: Dictionary(uniqueKeysWithValues: figures.map { ($0.name, $0.ratio) }),
            signalsPerRun: options.signals, secondsPerRoundTripRun: options.seconds, repeats: options.repeats,
            ingestWithin2x: verdict(figures).passed)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document)
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }
}
