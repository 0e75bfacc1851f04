import FleetCore
import GATT

/// The fleet's one way in: what the control interface, MQTT and tests ask of the fleet. Every
/// method answers once its outcome is known, and a refused command changes nothing.
public protocol FleetCommands: Sendable {
    /// Pins a device at run time (merged with the configuration's pins; a reload keeps it).
    func pin(_ device: DeviceID, options: FleetPinOptions) async throws(FleetCommandError)
    /// Undoes a run-time pin; a device pinned by the configuration file is refused.
    func unpin(_ device: DeviceID) async throws(FleetCommandError)
    /// Releases the device's link and holds it until `reconnect` (or `pin`).
    func disconnect(_ device: DeviceID) async throws(FleetCommandError)
    /// Pursues the device now: lifts a hold, clears its backoff and a given-up budget.
    func reconnect(_ device: DeviceID) async throws(FleetCommandError)
    /// Reads a characteristic of a linked device; the value is also published as a value.
    func read(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) -> [UInt8]
    /// Writes and answers once the outcome is known, within `budget` (see
    /// `FleetOrchestrator.writeAndWait`).
    func writeAndWait(
        _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS?, mode: OutgoingWriteMode, replaceable: Bool,
        budget: Duration
    ) async throws(FleetWriteError) -> FleetWriteOutcome
    /// Subscribes to a characteristic from now on (at once on a set-up link).
    func subscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError)
    func unsubscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError)
    /// The devices the radio hears that are not in the fleet; with `scanning`, after a scan
    /// that long (see `FleetOrchestrator.nearby(scanning:)`).
    func nearby(scanning: Duration?) async -> [FleetNearbyDevice]
    /// Bonds with a fleet device now (see `FleetOrchestrator.pair`).
    func pair(_ device: DeviceID) async throws(FleetCommandError)
    /// Forgets a fleet device's bond (see `FleetOrchestrator.unpair`).
    func unpair(_ device: DeviceID) async throws(FleetCommandError)
}

extension FleetOrchestrator: FleetCommands {
    /// Pins `device` from now on and saves the run-time pins before answering, as one
    /// transaction: the pins the command would leave are saved first, and only once they are on
    /// disk is the pin applied, so a save that fails leaves every record as it was (a pool
    /// device keeps its class, priority and hold) and the error says why. What the caller is
    /// told is what holds now and after a restart.
    public func pin(_ device: DeviceID, options: FleetPinOptions = FleetPinOptions()) async throws(FleetCommandError) {
        let objects = await bluetooth.objects(of: device)
        try await saveThenApply(.pin(device, options, objects: objects))
    }

    /// Unpins a run-time pin and saves the run-time pins before answering, as one transaction
    /// (see `pin`): a save that fails changes nothing.
    public func unpin(_ device: DeviceID) async throws(FleetCommandError) {
        try await saveThenApply(.unpin(device))
    }

    /// Releases the device's link and holds it down; answers once BlueZ reported the link gone
    /// (at once when there was none). If it is still up after `disconnectWait`, the answer is a
    /// `timeout` failure: the device stays held, and its link goes when bluetoothd lets it.
    public func disconnect(_ device: DeviceID) async throws(FleetCommandError) {
        try await accept(.disconnect(device))
        guard await waitForLinkDown(device, timeout: Self.disconnectWait) else {
            throw .failed(DeviceEvent.Failure(.timeout, message: "the link was still up after \(Self.disconnectWait); the device stays held"))
        }
    }

    /// How long `disconnect` waits for BlueZ to report the link gone (`Device1.Disconnect`
    /// usually takes milliseconds; a controller that is slow to answer takes seconds).
    static let disconnectWait: Duration = .seconds(10)

    /// How long `pair` waits for bluetoothd: the answer must come within a D-Bus call's 25 s
    /// (a pairing whose passkey the agent has takes about a second on the real stack).
    static let pairWait: Duration = .seconds(24)

    /// Bonds with `device` (a fleet device) now: `Device1.Pair`, connecting first if needed, on
    /// the adapter of its link; the daemon's agent answers what its pairing asks (a passkey from
    /// `[pairing] passkeys_file`). bluetoothd's refusal (`AuthenticationFailed`: a wrong or
    /// missing passkey; `AlreadyExists`: bonded already) is the answer. Bonded, a device that
    /// gave up on a failed bonding (a wrong passkey) is pursued again at once, as `reconnect`
    /// would (a held device stays held).
    public func pair(_ device: DeviceID) async throws(FleetCommandError) {
        guard status(of: device) != nil else { throw .unknownDevice(device) }
        let linked = linkAdapter(of: device)
        // Where the pairing goes: the link's adapter, else the object `pair` takes (its first).
        let firstObject = await bluetooth.objects(of: device).first?.adapter
        let adapter = linked ?? firstObject
        do {
            try await bluetooth.pair(device, on: linked, timeout: Self.pairWait)
        } catch {
            if let adapter { enqueue(.pairingEnded(adapter: adapter)) }
            throw .failed(error)
        }
        // bluetoothd stopped the adapter's discovery for the pairing, to resume it 5 s later.
        if let adapter { enqueue(.pairingEnded(adapter: adapter)) }
        if !isHeld(device) { try await accept(.reconnect(device)) }
    }

    /// Forgets `device`'s bond (every object bluetoothd has for it is removed, BlueZ's only
    /// unpairing); the fleet finds it again, unbonded, as a device it looks for. The device is
    /// held while its objects go — its link released first, as `disconnect` does — so that the
    /// fleet neither counts the link bluetoothd ends as a failure nor reconnects to an object
    /// being removed; then it is pursued again (a device held before stays held).
    public func unpair(_ device: DeviceID) async throws(FleetCommandError) {
        guard status(of: device) != nil else { throw .unknownDevice(device) }
        let heldBefore = isHeld(device)
        try await accept(.disconnect(device))
        _ = await waitForLinkDown(device, timeout: Self.disconnectWait)
        var failure: DeviceEvent.Failure?
        do {
            try await bluetooth.unpair(device)
        } catch {
            failure = error
        }
        if !heldBefore { try await accept(.reconnect(device)) }
        if let failure { throw .failed(failure) }
    }

    public func reconnect(_ device: DeviceID) async throws(FleetCommandError) {
        try await accept(.reconnect(device))
    }

    public func read(_ device: DeviceID, characteristic text: String) async throws(FleetCommandError) -> [UInt8] {
        let uuid = try Self.characteristicUUID(text)
        try await accept(.prepareRead(device))
        try await requireCharacteristic(device, uuid, allowing: .read, operation: "read")
        let bytes: [UInt8]
        do {
            bytes = try await bluetooth.deviceTransport.read(device, characteristic: uuid, on: linkAdapter(of: device))
        } catch {
            publish(.readFinished(device, characteristic: uuid, failure: error))
            throw .failed(error)
        }
        if !bluetooth.deviceTransport.readValuesAnnounced { pipeline.ingest(device: device, characteristic: uuid, bytes: bytes) }
        publish(.readFinished(device, characteristic: uuid, failure: nil))
        return bytes
    }

    public func subscribe(_ device: DeviceID, characteristic text: String) async throws(FleetCommandError) {
        let uuid = try Self.characteristicUUID(text)
        try await requireCharacteristicIfLinked(device, uuid)
        try await accept(.subscribe(device, characteristic: uuid))
    }

    public func unsubscribe(_ device: DeviceID, characteristic text: String) async throws(FleetCommandError) {
        try await accept(.unsubscribe(device, characteristic: try Self.characteristicUUID(text)))
    }

    // MARK: - Checks

    /// A command that changes the run-time pins: tried on a copy of the machine (a refusal
    /// changes nothing and saves nothing), the pins it leaves saved, then applied. If the fleet
    /// changed in between so that the command is refused after all, the pins as they are are
    /// saved again.
    private func saveThenApply(_ command: FleetCommand) async throws(FleetCommandError) {
        if pinTransactionRunning {
            await withCheckedContinuation(isolation: self) { pinTransactionsWaiting.append($0) }
        }
        pinTransactionRunning = true
        defer {
            if pinTransactionsWaiting.isEmpty {
                pinTransactionRunning = false
            } else {
                pinTransactionsWaiting.removeFirst().resume()  // handed on, still running
            }
        }
        guard let pins = runtimePins(after: command) else {
            // Refused on the copy: the real input says why, and changes nothing. If the fleet
            // changed meanwhile so that it is accepted after all, what it made is saved now.
            try await accept(command)
            try await saveRuntimePins(runtimePins)
            return
        }
        try await saveRuntimePins(pins)
        do {
            try await accept(command)
        } catch {
            try? await saveRuntimePins(runtimePins)
            throw error
        }
        // Something else changed the pins meanwhile (a reload): the file follows the fleet.
        if runtimePins != pins { try? await saveRuntimePins(runtimePins) }
    }

    /// Submits the command; a refusal is thrown.
    private func accept(_ command: FleetCommand) async throws(FleetCommandError) {
        if case .refused(let error)? = await submit(.command(command)) { throw error }
    }

    /// The canonical lower-case 128-bit form BlueZ and the pipeline use.
    static func characteristicUUID(_ text: String) throws(FleetCommandError) -> String {
        guard let uuid = BluetoothUUID(text) else { throw .invalidCharacteristic(text) }
        return uuid.description
    }

    /// The device's linked object must have the characteristic, with one of `flags`.
    private func requireCharacteristic(
        _ device: DeviceID, _ uuid: String, allowing flags: GATTCharacteristicFlags, operation: String
    ) async throws(FleetCommandError) {
        guard let characteristic = await bluetooth.characteristic(uuid, of: device) else { throw .unknownCharacteristic(device, uuid) }
        guard !characteristic.flags.isDisjoint(with: flags) else { throw .notPermitted(device, uuid, operation: operation) }
    }

    /// A subscription to a linked device is checked against its GATT objects now; one to a
    /// device without a link is checked when it connects (a missing one degrades it then).
    private func requireCharacteristicIfLinked(_ device: DeviceID, _ uuid: String) async throws(FleetCommandError) {
        let state = status(of: device)
        guard state?.isLinked == true else { return }
        try await requireCharacteristic(device, uuid, allowing: [.notify, .indicate], operation: "notify")
    }
}
