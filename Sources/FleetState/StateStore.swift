import FleetCore
import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The known-devices file (`known-devices.json` in the state directory) and its in-memory copy.
///
/// Guarantees:
/// - Saves are atomic (`AtomicFileWriter`): a crash leaves the previous or the new file.
/// - Saves are debounced: changes within `debounce` of the first unsaved change are written
///   together, once. `flush()` writes pending changes now (call it on shutdown).
/// - A failed save keeps the changes pending and is retried (after `retryDelay`, or at the next
///   change or flush); the previous file stays intact meanwhile.
/// - A corrupt, unreadable or too-new file is renamed aside (`known-devices.json.corrupt-<UTC>`)
///   with its content untouched and reported; the store then starts empty. It is never overwritten.
///
/// Saves run on this actor (including `fsync`, on the state directory's own queue, never the
/// concurrency pool: `StateDirectoryExecutor`), so callers of `update` may wait behind one save;
/// the debounce keeps that to about one save per `debounce`.
public actor StateStore {
    /// Off the concurrency pool: saves block in `fsync` (`StateDirectoryExecutor`).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { StateDirectoryExecutor.shared.asUnownedSerialExecutor() }
    public static let fileName = "known-devices.json"

    public nonisolated let directory: URL
    public nonisolated var file: URL { directory.appendingPathComponent(Self.fileName) }

    private let debounce: Duration
    private let retryDelay: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    let writer: any StateFileWriting
    let now: @Sendable () -> Date
    let logger: Logger

    private var devices: [DeviceID: KnownDevice] = [:]
    private var dirty = false
    /// The scheduled save, and a token so a superseded timer that wakes late does nothing.
    private var scheduledSave: Task<Void, Never>?
    private var scheduleToken: UInt64 = 0

    /// - Parameters:
    ///   - debounce: how long after the first unsaved change the save happens.
    ///   - sleep: waits for a delay; injected so tests decide when the debounce timer fires.
    ///   - writer: `AtomicFileWriter()` in production.
    ///   - now: wall clock for set-aside file names.
    public init(
        directory: URL,
        debounce: Duration = .seconds(1),
        retryDelay: Duration = .seconds(10),
        logger: Logger,
        writer: any StateFileWriting = AtomicFileWriter(),
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.directory = directory
        self.debounce = debounce
        self.retryDelay = retryDelay
        self.logger = logger
        self.writer = writer
        self.now = now
        self.sleep = sleep
    }

    // MARK: - Reading

    /// Every known device, sorted by identity.
    public var knownDevices: [KnownDevice] { devices.values.sorted { $0.id < $1.id } }

    public func device(_ id: DeviceID) -> KnownDevice? { devices[id] }

    /// Whether changes are waiting to be saved.
    public var hasUnsavedChanges: Bool { dirty }

    // MARK: - Changing

    /// Adds or replaces the record for `device.id`; saved after the debounce.
    public func update(_ device: KnownDevice) {
        guard devices[device.id] != device else { return }
        devices[device.id] = device
        markDirty()
    }

    /// Changes the record for `id` in place, starting from `initial` if it is unknown, in one
    /// actor turn (no lost update between a read and a write by two callers).
    public func modify(_ id: DeviceID, creating initial: KnownDevice, _ change: @Sendable (inout KnownDevice) -> Void) {
        var device = devices[id] ?? initial
        change(&device)
        update(device)
    }

    /// Changes the record for `id` if the store knows the device; does nothing otherwise.
    public func modifyIfKnown(_ id: DeviceID, _ change: @Sendable (inout KnownDevice) -> Void) {
        guard var device = devices[id] else { return }
        change(&device)
        update(device)
    }

    /// Forgets a device; saved after the debounce.
    public func remove(_ id: DeviceID) {
        guard devices.removeValue(forKey: id) != nil else { return }
        markDirty()
    }

    /// Saves pending changes now; returns whether the file was written (false: nothing was
    /// pending). Throws if the save fails (the changes stay pending and a retry is scheduled, in
    /// case the daemon keeps running).
    @discardableResult
    public func flush() throws(StateStoreError) -> Bool {
        scheduleToken &+= 1
        scheduledSave?.cancel()
        scheduledSave = nil
        guard dirty else { return false }
        do {
            try save()
            return true
        } catch {
            schedule(after: retryDelay)
            throw error
        }
    }

    // MARK: - Saving

    private func markDirty() {
        dirty = true
        schedule(after: debounce)
    }

    private func schedule(after delay: Duration) {
        guard scheduledSave == nil else { return }  // The pending save will include this change.
        scheduleToken &+= 1
        let token = scheduleToken
        let sleep = self.sleep
        // The task inherits this actor's isolation, so the save runs on the actor.
        scheduledSave = Task {
            // Cancelled only by flush(), which saves itself; the token check below then skips.
            try? await sleep(delay)
            self.timerFired(token: token)
        }
    }

    private func timerFired(token: UInt64) {
        guard token == scheduleToken else { return }
        scheduledSave = nil
        guard dirty else { return }
        do {
            try save()
        } catch {
            logger.error("could not save known devices; will retry", metadata: [
                "event": "state_save_failed", "error": "\(error)", "retry_in": "\(retryDelay)",
            ])
            schedule(after: retryDelay)
        }
    }

    private func save() throws(StateStoreError) {
        let data = StateFile.encode(Array(devices.values))
        try writer.write(data, to: file)
        dirty = false
    }

    /// Replaces the in-memory devices after a load; nothing to save (the file is the source).
    func replaceAll(with loaded: [KnownDevice]) {
        devices = Dictionary(loaded.map { ($0.id, $0) }, uniquingKeysWith: { _, later in later })
        dirty = false
    }

    /// Waits until the currently scheduled save (if any) has run. For tests.
    package func waitForScheduledSave() async {
        await scheduledSave?.value
    }
}
