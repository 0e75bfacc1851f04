/// A plain-text table with aligned columns, as `systemctl list-units` prints: a header row,
/// then one row per item, columns separated by two spaces, no trailing spaces.
///
/// Cells are sanitized (`TerminalText.sanitized`), a missing cell shows as "-", and a column
/// with a `maxWidth` truncates longer cells with "…". Widths are terminal columns, so wide
/// characters keep the columns aligned.
public struct TextTable: Sendable {
    public enum Alignment: Sendable { case left, right }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        public var maxWidth: Int?

        public init(_ title: String, alignment: Alignment = .left, maxWidth: Int? = nil) {
            self.title = title
            self.alignment = alignment
            self.maxWidth = maxWidth
        }
    }

    /// What a missing value looks like.
    public static let missing = "-"

    public var columns: [Column]

    public init(_ columns: [Column]) { self.columns = columns }

    /// The header line and one line per row. Rows shorter than the header get "-" cells.
    public func render(_ rows: [[String?]]) -> [String] {
        let cells: [[String]] = rows.map { row in
            columns.indices.map { index in
                let text = index < row.count ? row[index].map(TerminalText.sanitized) ?? Self.missing : Self.missing
                guard let maxWidth = columns[index].maxWidth else { return text }
                return TerminalText.truncated(text, toWidth: maxWidth)
            }
        }
        let widths = columns.indices.map { index in
            cells.reduce(TerminalText.width(columns[index].title)) { max($0, TerminalText.width($1[index])) }
        }
        func line(_ values: [String]) -> String {
            let padded = values.indices.map { index in
                TerminalText.padded(values[index], toWidth: widths[index], alignment: columns[index].alignment)
            }
            var text = padded.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
        return [line(columns.map(\.title))] + cells.map(line)
    }
}
