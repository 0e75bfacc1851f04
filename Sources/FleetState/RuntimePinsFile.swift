import FleetCore
import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The pins made at run time (`Pin` over D-Bus, MQTT), kept in a file of their own beside the
/// known-devices file (`runtime-pins.json` in the state directory), so that they survive a
/// restart and that pruning or rewriting the known devices never touches them. The configuration
/// file's pins are never written here: they are the file's, and merge with these at start.
///
/// Guarantees:
/// - `save` replaces the file atomically (`AtomicFileWriter`): after a crash it holds the pins of
///   the last completed save, never a mix. Saves are serialised by this actor.
/// - `load` never fails the daemon: a missing file is no pins; an unreadable, corrupt or
///   future-version file is renamed aside (`runtime-pins.json.corrupt-<UTC stamp>`), logged at
///   error level, and the daemon starts with the configuration's pins only.
public actor RuntimePinsFile {
    /// Off the concurrency pool: saves block in `fsync` (`StateDirectoryExecutor`).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { StateDirectoryExecutor.shared.asUnownedSerialExecutor() }
    public static let fileName = "runtime-pins.json"
    static let format = "wearfleet-runtime-pins"
    static let version = 1

    public nonisolated let file: URL
    private let writer: any StateFileWriting
    private let logger: Logger
    /// The generation of the pins last written.
    private var savedGeneration: UInt64 = 0

    public init(directory: URL, writer: any StateFileWriting = AtomicFileWriter(), logger: Logger) {
        self.file = directory.appendingPathComponent(Self.fileName)
        self.writer = writer
        self.logger = logger
    }

    /// The pins a previous run saved, ordered by device.
    public func load() -> [FleetRuntimeConfiguration.PinnedDevice] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            if !FileManager.default.fileExists(atPath: file.path) { return [] }
            setAside(reason: "cannot be read: \(error)")
            return []
        }
        do {
            let decoded = try JSONDecoder().decode(Contents.self, from: data)
            guard decoded.format == Self.format else {
                setAside(reason: "is not a runtime pins file (format \(decoded.format))")
                return []
            }
            guard decoded.version == Self.version else {
                setAside(reason: "has version \(decoded.version), this wearfleetd reads version \(Self.version)")
                return []
            }
            let pins = decoded.pins.map(\.pinnedDevice).sorted { $0.id < $1.id }
            logger.info("runtime pins loaded", metadata: ["event": "runtime_pins_loaded", "count": "\(pins.count)", "path": "\(file.path)"])
            return pins
        } catch {
            setAside(reason: "is corrupt: \(error)")
            return []
        }
    }

    /// Replaces the file with `pins`. Throws `StateStoreError.writeFailed`; the previous file is
    /// then intact. `generation` orders saves from callers that may race (the newest set wins: a
    /// save older than the last one written does nothing).
    public func save(_ pins: [FleetRuntimeConfiguration.PinnedDevice], generation: UInt64 = .max) throws(StateStoreError) {
        guard generation == .max || generation > savedGeneration else { return }
        let contents = Contents(format: Self.format, version: Self.version, pins: pins.sorted { $0.id < $1.id }.map(Entry.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(contents)
        } catch {
            throw .writeFailed(path: file.path, step: "encode", errno: EINVAL)
        }
        try writer.write(data + Data("\n".utf8), to: file)
        if generation != .max { savedGeneration = generation }
    }

    private func setAside(reason: String) {
        if let aside = StateStore.setAside(file, at: Date()) {
            logger.error("the runtime pins file \(reason); set aside, starting with the configuration's pins only", metadata: [
                "event": "runtime_pins_set_aside", "path": "\(aside.path)",
            ])
        } else {
            logger.error("the runtime pins file \(reason), and it cannot be set aside; starting with the configuration's pins only", metadata: [
                "event": "runtime_pins_unusable", "path": "\(file.path)",
            ])
        }
    }

    // MARK: - Format

    /// `{"format": "wearfleet-runtime-pins", "version": 1, "pins": [...]}`: the format name says
    /// what the file is to someone who finds it in the state directory.
    struct Contents: Codable {
        var format: String
        var version: Int
        var pins: [Entry]
    }

    struct Entry: Codable {
        var device: DeviceID
        var className: String
        var priority: Int
        var name: String?

        enum CodingKeys: String, CodingKey {
            case device
            case className = "class"
            case priority, name
        }

        init(_ pin: FleetRuntimeConfiguration.PinnedDevice) {
            device = pin.id
            className = pin.className
            priority = pin.priority
            name = pin.name
        }

        /// The pin, its priority brought into the one range (earlier versions took ±1,000,000 at
        /// run time; the order among such pins is kept as far as the range allows).
        var pinnedDevice: FleetRuntimeConfiguration.PinnedDevice {
            let range = FleetPinOptions.priorities
            return FleetRuntimeConfiguration.PinnedDevice(
                id: device, name: name, className: className, priority: min(max(priority, range.lowerBound), range.upperBound))
        }
    }
}
