// Decoding never stops at the first problem: every accessor records what is wrong and returns nil,
// and the section decoders keep the default for that key, so one pass reports every error in the
// configuration. The caller discards the value whenever `errors` is not empty.

import TOML
import FleetCore
import GATT

/// Turns a merged TOML document into a `WearfleetConfiguration`, collecting every error.
struct ConfigurationDecoder {
    var errors: [ConfigurationError] = []
    /// Class names used by pinned devices and the pool, checked once `[classes]` is known.
    var classReferences: [(name: String, position: TOMLPosition, user: String)] = []

    mutating func report(_ message: String, at position: TOMLPosition) {
        errors.append(ConfigurationError(at: position, message))
    }

    // MARK: - Keys

    /// Reports each key of `section` not in `allowed`, with the closest allowed key as a hint.
    mutating func rejectUnknownKeys(in section: ConfigSection, allowed: [String]) {
        for entry in section.table.entries where !allowed.contains(entry.key) {
            var hint = KeySuggestion.hint(for: entry.key, among: allowed)
            let elsewhere = ConfigurationSchema.sections(accepting: entry.key, except: section.name)
            if hint.isEmpty, !elsewhere.isEmpty {
                hint = " (it belongs in \(elsewhere.joined(separator: " or ")))"
            }
            report("unknown key '\(entry.key)' in \(section.name)\(hint)", at: entry.keyPosition)
        }
    }

    mutating func wrongType(_ entry: TOMLEntry, in section: ConfigSection, expected: String) {
        report("'\(entry.key)' in \(section.name) must be \(expected), found \(entry.value.typeDescription)", at: entry.node.position)
    }

    // MARK: - Scalars

    mutating func boolean(_ section: ConfigSection, _ key: String) -> Bool? {
        guard let entry = section[key] else { return nil }
        guard case .boolean(let value) = entry.value else {
            wrongType(entry, in: section, expected: "a boolean (true or false)")
            return nil
        }
        return value
    }

    mutating func integer(_ section: ConfigSection, _ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let entry = section[key] else { return nil }
        guard case .integer(let value) = entry.value else {
            wrongType(entry, in: section, expected: "an integer")
            return nil
        }
        guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
            report("'\(key)' in \(section.name) must be between \(range.lowerBound) and \(range.upperBound), found \(value)", at: entry.node.position)
            return nil
        }
        return Int(value)
    }

    /// A float; an integer is accepted too (`score_margin = 10`).
    mutating func number(_ section: ConfigSection, _ key: String, in range: ClosedRange<Double>) -> Double? {
        guard let entry = section[key] else { return nil }
        let value: Double
        switch entry.value {
        case .float(let float): value = float
        case .integer(let integer): value = Double(integer)
        default:
            wrongType(entry, in: section, expected: "a number")
            return nil
        }
        guard range.contains(value) else {
            report("'\(key)' in \(section.name) must be between \(range.lowerBound) and \(range.upperBound), found \(value)", at: entry.node.position)
            return nil
        }
        return value
    }

    mutating func string(_ section: ConfigSection, _ key: String) -> (value: String, position: TOMLPosition)? {
        guard let entry = section[key] else { return nil }
        guard case .string(let value) = entry.value else {
            wrongType(entry, in: section, expected: "a string")
            return nil
        }
        return (value, entry.node.position)
    }

    /// A string that must not be empty.
    mutating func name(_ section: ConfigSection, _ key: String) -> (value: String, position: TOMLPosition)? {
        guard let (value, position) = string(section, key) else { return nil }
        guard !value.isEmpty else {
            report("'\(key)' in \(section.name) must not be empty", at: position)
            return nil
        }
        return (value, position)
    }

    mutating func duration(
        _ section: ConfigSection, _ key: String, minimum: Duration = .zero, maximum: Duration = ConfigDuration.maximum
    ) -> Duration? {
        guard let entry = section[key] else { return nil }
        guard case .string(let text) = entry.value else {
            wrongType(entry, in: section, expected: "a duration such as \"250ms\", \"2s\" or \"5m\"")
            return nil
        }
        guard let duration = ConfigDuration.parse(text, maximum: maximum) else {
            report("'\(key)' in \(section.name): '\(text)' is not a duration (write e.g. \"250ms\", \"2s\", \"5m\", \"1h30m\"; at most \(maximum == ConfigDuration.maximum ? "1 week" : ConfigDuration.format(maximum)))", at: entry.node.position)
            return nil
        }
        guard duration >= minimum else {
            report("'\(key)' in \(section.name) must be at least \(ConfigDuration.format(minimum)), found \"\(text)\"", at: entry.node.position)
            return nil
        }
        return duration
    }

    /// A duration where `"0s"` means off.
    mutating func optionalDuration(_ section: ConfigSection, _ key: String) -> Duration?? {
        guard section[key] != nil else { return .none }
        guard let duration = duration(section, key) else { return .none }
        return .some(duration == .zero ? nil : duration)
    }

    // MARK: - Structure

    mutating func table(_ section: ConfigSection, _ key: String, name: String) -> ConfigSection? {
        guard let entry = section[key] else { return nil }
        guard case .table(let table) = entry.value else {
            wrongType(entry, in: section, expected: "a table")
            return nil
        }
        return ConfigSection(table: table, name: name)
    }

    mutating func array(_ section: ConfigSection, _ key: String) -> [TOMLNode]? {
        guard let entry = section[key] else { return nil }
        guard case .array(let elements) = entry.value else {
            wrongType(entry, in: section, expected: "an array")
            return nil
        }
        return elements
    }

    /// An array of strings; each element that is not a string is reported at its own position.
    mutating func strings(_ section: ConfigSection, _ key: String) -> [(value: String, position: TOMLPosition)]? {
        guard let elements = array(section, key) else { return nil }
        var result: [(String, TOMLPosition)] = []
        var valid = true
        for element in elements {
            guard case .string(let text) = element.value else {
                report("'\(key)' in \(section.name) must hold strings, found \(element.value.typeDescription)", at: element.position)
                valid = false
                continue
            }
            result.append((text, element.position))
        }
        return valid ? result : nil
    }

    /// An array of UUIDs written as strings: `"2A37"`, `"0x2A37"` or 128-bit.
    mutating func uuids(_ section: ConfigSection, _ key: String) -> [BluetoothUUID]? {
        guard let texts = strings(section, key) else { return nil }
        var result: [BluetoothUUID] = []
        var valid = true
        for (text, position) in texts {
            guard let uuid = uuid(text, key: key, in: section, at: position) else {
                valid = false
                continue
            }
            if result.contains(uuid) {
                report("'\(key)' in \(section.name) lists \(uuid.shortDescription) twice", at: position)
                valid = false
            }
            result.append(uuid)
        }
        return valid ? result : nil
    }

    mutating func uuid(_ text: String, key: String, in section: ConfigSection, at position: TOMLPosition) -> BluetoothUUID? {
        guard let uuid = BluetoothUUID(text) else {
            report("'\(key)' in \(section.name): '\(text)' is not a Bluetooth UUID (write 16-bit \"2A37\" or 128-bit \"6e400003-b5a3-f393-e0a9-e50e24dcca9e\")", at: position)
            return nil
        }
        return uuid
    }

    /// `hci0`-style adapter names.
    mutating func adapter(_ text: String, key: String, in section: ConfigSection, at position: TOMLPosition) -> AdapterID? {
        let digits = text.dropFirst(3)
        guard text.hasPrefix("hci"), !digits.isEmpty, digits.count <= 3,
              digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            report("'\(key)' in \(section.name): '\(text)' is not an adapter name (expected hci0, hci1, …)", at: position)
            return nil
        }
        return AdapterID(text)
    }
}
