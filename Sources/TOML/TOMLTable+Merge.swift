// Drop-ins refine the main file rather than replace whole sections: a drop-in that only says
// `[fleet] max_connections = 3` must keep every other `[fleet]` key of the main file.

extension TOMLTable {
    /// This table with `later` laid over it: tables merge key by key, recursively; any other value
    /// in `later` replaces the earlier one (arrays included, so a list is never half-merged);
    /// arrays at the dotted paths in `accumulating` (such as `pinned`) are concatenated instead.
    public func merged(with later: TOMLTable, accumulating: Set<String> = [], path: String = "") -> TOMLTable {
        var result = self
        for entry in later.entries {
            let keyPath = path.isEmpty ? entry.key : path + "." + entry.key
            guard let earlier = result[entry.key] else {
                result[entry.key] = entry
                continue
            }
            switch (earlier.value, entry.value) {
            case (.table(let old), .table(let new)):
                var merged = entry
                merged.node.value = .table(old.merged(with: new, accumulating: accumulating, path: keyPath))
                result[entry.key] = merged
            case (.array(let old), .array(let new)) where accumulating.contains(keyPath):
                var merged = entry
                merged.node.value = .array(old + new)
                result[entry.key] = merged
            default:
                result[entry.key] = entry
            }
        }
        return result
    }
}
