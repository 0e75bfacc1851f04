import FoundationEssentials
import Glibc

/// The known-devices file format: a JSON object with a `formatVersion` and the devices, sorted by
/// identity. Pure: bytes in, devices out, no I/O.
///
/// Guarantees: `encode` is deterministic (sorted keys and devices), and `decode` never guesses:
/// anything that is not a complete version-1 file is an error, and a file from a newer daemon is
/// reported as `unsupportedVersion` rather than read as garbage or overwritten by this one.
public enum StateFile {
    public static let currentVersion = 1

    /// Why bytes could not be read as a state file.
    public enum DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not JSON, not an object, a missing or malformed field, an invalid address, …
        case corrupt(String)
        /// Written by a newer daemon (after a downgrade); this one cannot know what it would lose.
        case unsupportedVersion(Int)

        public var description: String {
            switch self {
            case .corrupt(let reason): "corrupt state file: \(reason)"
            case .unsupportedVersion(let version):
                "state file format version \(version) is newer than this daemon supports (\(StateFile.currentVersion))"
            }
        }
    }

    private struct Envelope: Codable {
        var formatVersion: Int
        var devices: [KnownDevice]
    }

    private struct VersionProbe: Decodable {
        var formatVersion: Int?
    }

    public static func encode(_ devices: [KnownDevice]) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let envelope = Envelope(formatVersion: currentVersion, devices: devices.sorted { $0.id < $1.id })
        // Encoding plain strings, integers and dates cannot fail; an empty file would be worse
        // than a crash here, so a failure is a programming error.
        do {
            var data = try encoder.encode(envelope)
            data.append(UInt8(ascii: "\n"))
            return data
        } catch {
            preconditionFailure("encoding the state file failed: \(error)")
        }
    }

    public static func decode(_ data: Data) throws(DecodeError) -> [KnownDevice] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let version: Int
        do {
            guard let found = try decoder.decode(VersionProbe.self, from: data).formatVersion else {
                throw DecodeError.corrupt("no formatVersion")
            }
            version = found
        } catch let error as DecodeError {
            throw error
        } catch {
            throw .corrupt(describe(error))
        }
        guard version <= currentVersion else { throw .unsupportedVersion(version) }
        guard version == currentVersion else { throw .corrupt("unknown formatVersion \(version)") }
        do {
            return try decoder.decode(Envelope.self, from: data).devices
        } catch {
            throw .corrupt(describe(error))
        }
    }

    /// A one-line reason naming the JSON path, for the log and `systemctl status`.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath)): missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
