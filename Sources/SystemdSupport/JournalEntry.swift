import Logging

/// Builds the fields of one native journald entry from a swift-log record. Pure: no I/O, no
/// clock, so exactly what journald will receive can be asserted in a unit test.
///
/// Guarantees: every returned field has a valid name; the entry always has `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE` and `CODE_FUNC` exactly once, and metadata can never
/// override them (a metadata key that maps onto one of them is sent as `META_<NAME>` instead).
public enum JournalEntry {
    /// Field names the handler owns. Other well-known fields (`MESSAGE_ID`, `ERRNO`, …) may come
    /// from metadata, which is how a caller sets them.
    public static let reservedNames: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    public static func fields(
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata,
        identifier: String,
        file: String,
        function: String,
        line: UInt
    ) -> [JournalField] {
        var fields: [JournalField] = []
        fields.reserveCapacity(6 + metadata.count)
        func add(_ name: String, _ value: String) {
            // Names here are literals or sanitized, so this cannot fail; the guard keeps it total.
            if let field = JournalField(name: name, value: value) { fields.append(field) }
        }
        add("MESSAGE", message)
        add("PRIORITY", String(level.syslogPriority))
        add("SYSLOG_IDENTIFIER", identifier)
        add("CODE_FILE", file)
        add("CODE_LINE", String(line))
        add("CODE_FUNC", function)

        // Sorted by key so the same record always produces the same entry; two keys that sanitize
        // to the same name are both sent (journald allows repeated fields).
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard var name = JournalField.sanitizedName(key) else { continue }
            if reservedNames.contains(name) { name = "META_" + name }
            add(name, LogMetadataText.render(value))
        }
        return fields
    }
}
