import TOML

// A misspelt key is the most common config mistake; naming the likely intended key saves a trip
// to the documentation.

/// Finds the known word closest to a misspelt one.
enum KeySuggestion {
    /// The candidate within a small edit distance of `word` (1 for short words, 2 otherwise,
    /// 3 for long ones), closest first; nil when nothing is close enough.
    static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let limit = word.count <= 4 ? 1 : word.count <= 10 ? 2 : 3
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance <= limit, distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    /// Levenshtein distance over Unicode scalars, with adjacent transpositions counting as one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }

    /// ` (did you mean 'x'?)` or the empty string.
    static func hint(for word: String, among candidates: some Sequence<String>, quote: (String) -> String = { "'\($0)'" }) -> String {
        closest(to: word, among: candidates).map { " (did you mean \(quote($0))?)" } ?? ""
    }
}
