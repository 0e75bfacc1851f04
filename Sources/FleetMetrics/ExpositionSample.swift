/// Sample lines of the text exposition format 0.0.4, for the families the recorder renders itself.
enum ExpositionSample {
    /// `name{label="value",…} value` (no braces without labels).
    static func line(_ name: String, _ labels: [(String, String)], _ value: String) -> [UInt8] {
        var line = Array(name.utf8)
        line.reserveCapacity(name.utf8.count + labels.count * 24 + value.utf8.count + 4)
        if !labels.isEmpty {
            line.append(UInt8(ascii: "{"))
            for (index, (label, text)) in labels.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                line.append(contentsOf: label.utf8)
                line.append(contentsOf: "=\"".utf8)
                appendEscaped(text, to: &line)
                line.append(UInt8(ascii: "\""))
            }
            line.append(UInt8(ascii: "}"))
        }
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: value.utf8)
        return line
    }

    /// A label value escapes backslash, double quote and line feed.
    static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): line.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\""): line.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\n"): line.append(contentsOf: "\\n".utf8)
            default: line.append(byte)
            }
        }
    }

    static func value(_ number: Int) -> String { String(number) }

    /// Go-style special values (`NaN`, `+Inf`, `-Inf`), Swift's shortest round-trip text otherwise.
    static func value(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number > 0 ? "+Inf" : "-Inf" }
        return "\(number)"
    }
}
