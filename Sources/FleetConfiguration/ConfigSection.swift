import TOML

/// A table of the configuration together with the name used for it in messages (`[fleet]`,
/// `[classes.band]`, `[[pinned]]`).
struct ConfigSection {
    var table: TOMLTable
    var name: String

    subscript(key: String) -> TOMLEntry? { table[key] }
}
