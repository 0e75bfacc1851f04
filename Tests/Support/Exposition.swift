/// A strict reader of the Prometheus text exposition format (0.0.4), for asserting what the
/// endpoint serves: every line is `# HELP name text`, `# TYPE name type`, or a sample
/// `name{label="value",…} value`; HELP and TYPE appear at most once per family, TYPE before the
/// family's samples; label values use only the escapes `\\`, `\"` and `\n`.
public struct Exposition {
    public struct Sample: Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let line: Int
        public let text: String
        public let why: String
        public var description: String { "line \(line): \(why): \(text)" }
    }

    public private(set) var types: [String: String] = [:]
    public private(set) var helps: [String: String] = [:]
    public private(set) var samples: [Sample] = []

    public init(_ text: String) throws {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            func invalid(_ why: String) -> Invalid { Invalid(line: number, text: String(line), why: why) }
            if line.isEmpty {
                guard index == text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 else { throw invalid("empty line") }
                continue
            }
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, Self.isMetricName(parts[0]) else { throw invalid("bad HELP/TYPE line") }
                let name = String(parts[0])
                if line.hasPrefix("# HELP ") {
                    guard helps[name] == nil else { throw invalid("a second HELP for \(name)") }
                    helps[name] = String(parts[1])
                } else {
                    guard types[name] == nil else { throw invalid("a second TYPE for \(name)") }
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1]) else { throw invalid("unknown type") }
                    guard !samples.contains(where: { Self.family(of: $0.name, types: types) == name }) else {
                        throw invalid("TYPE after the family's samples")
                    }
                    types[name] = String(parts[1])
                }
                continue
            }
            if line.hasPrefix("#") { continue }  // a comment
            guard let sample = Self.sample(line) else { throw invalid("not a sample line") }
            guard types[Self.family(of: sample.name, types: types)] != nil else { throw invalid("sample before its TYPE") }
            samples.append(sample)
        }
    }

    /// The samples of `name` whose labels include `labels`.
    public func values(_ name: String, _ labels: [String: String] = [:]) -> [Double] {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value }
        }.map(\.value)
    }

    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let found = values(name, labels)
        return found.count == 1 ? found[0] : nil
    }

    // MARK: - Grammar

    public static func family(of sampleName: String, types: [String: String]) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where sampleName.hasSuffix(suffix) {
            let base = String(sampleName.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return sampleName
    }

    public static func isMetricName(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    public static func isLabelName(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    public static func sample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let labelName = String(rest.prefix { $0 != "=" })
                guard isLabelName(labelName), labels[labelName] == nil else { return nil }
                rest = rest.dropFirst(labelName.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.first else { return nil }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\n" { return nil }
                    if character == "\\" {
                        guard let escaped = rest.first else { return nil }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                labels[labelName] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let fields = rest.dropFirst().split(separator: " ")
        guard fields.count == 1 || fields.count == 2 else { return nil }  // value [timestamp]
        let value: Double
        switch fields[0] {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(fields[0]), parsed.isFinite else { return nil }
            value = parsed
        }
        if fields.count == 2, Int64(fields[1]) == nil { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }
}
