// journald fields and JSON objects are both flat, ordered key/value lists; one rendering serves
// both, so a field means the same thing in every sink.

/// A decoded value that renders itself as ordered key/value pairs and a one-line summary.
///
/// Keys are snake_case and stable (they are part of the log format); values are plain text with
/// numbers formatted exactly (no locale, no exponent notation). Optional fields that are absent
/// from the payload are omitted, never rendered as empty strings.
public protocol KeyValueRenderable {
    /// Ordered (key, value) pairs; see `CharacteristicEvent` for the table of keys.
    var keyValuePairs: [(key: String, value: String)] { get }
    /// A short human-readable line for a live view, e.g. `72 bpm, RR 812/799 ms`.
    var summary: String { get }
}
