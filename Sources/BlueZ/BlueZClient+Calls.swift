import DBus

/// Write types of `GattCharacteristic1.WriteValue`'s `type` option.
public enum BlueZWriteType: String, Sendable {
    /// Write with response: BlueZ replies once the device acknowledged.
    case request
    /// Write without response: no acknowledgement and no backpressure from BlueZ.
    case command
}

/// A socket BlueZ handed out for the fd path (`AcquireNotify`/`AcquireWrite`): SOCK_SEQPACKET,
/// one datagram per value, closed by BlueZ on disconnect. The caller owns `descriptor`.
public struct BlueZAcquiredSocket: Sendable {
    public let descriptor: DBusFileDescriptor
    public let mtu: UInt16
}

extension BlueZClient {
    /// Every call goes through here: D-Bus errors become `BlueZError`, with a timeout always.
    /// None may start bluetoothd (`autoStart` false): Debian installs `org.bluez` as a D-Bus
    /// activatable service, so a call made while bluetoothd is away would ask the bus to start
    /// it, undoing an operator's `systemctl stop bluetooth`; it fails at once (`NameHasNoOwner`,
    /// bluetoothd not ready) and the daemon waits for bluetoothd to come back on its own.
    ///
    /// While the client follows bluetoothd (`start()` to `stop()`), a call made while bluetoothd
    /// is not on the bus is not sent at all, and fails the same way: whoever made it (a task the
    /// fleet started, a retry) learns that bluetoothd left only after the client did.
    func bluezCall(
        _ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [],
        timeout: Duration = .seconds(30)
    ) async throws(BlueZError) -> [DBusValue] {
        if following, owner == nil {
            throw BlueZError(name: DBusError.nameHasNoOwner, message: "bluetoothd is not on the bus: \(interface).\(member) not sent")
        }
        do {
            return try await connection.call(
                destination: BlueZInterfaces.service, path: path, interface: interface, member: member, body,
                timeout: timeout, autoStart: false)
        } catch let error as DBusError {
            throw BlueZError(error)
        } catch is CancellationError {
            throw BlueZError(name: DBusError.failed, message: "cancelled")
        } catch {
            throw BlueZError(name: DBusError.failed, message: "\(error)")
        }
    }

    private static func decodeFailure(_ error: any Error) -> BlueZError {
        BlueZError(name: DBusError.invalidArgs, message: "unexpected reply from bluetoothd: \(error)")
    }

    // MARK: - Adapter1

    public func startDiscovery(adapter: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(adapter, BlueZInterfaces.adapter, "StartDiscovery")
    }

    public func stopDiscovery(adapter: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(adapter, BlueZInterfaces.adapter, "StopDiscovery")
    }

    /// `SetDiscoveryFilter`: LE only, optional service UUIDs and RSSI threshold, duplicates kept
    /// so RSSI keeps updating.
    public func setDiscoveryFilter(adapter: DBusObjectPath, uuids: [String], minimumRSSI: Int16?) async throws(BlueZError) {
        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(true)]
        if !uuids.isEmpty { filter["UUIDs"] = .stringArray(uuids) }
        if let minimumRSSI { filter["RSSI"] = .int16(minimumRSSI) }
        _ = try await bluezCall(adapter, BlueZInterfaces.adapter, "SetDiscoveryFilter", [.stringVariantMap(filter)])
    }

    /// `ConnectDevice` (experimental in BlueZ): connects a device bluetoothd has no object for.
    public func connectDevice(
        adapter: DBusObjectPath, address: String, addressType: String, timeout: Duration = .seconds(45)
    ) async throws(BlueZError) -> DBusObjectPath {
        let reply = try await bluezCall(
            adapter, BlueZInterfaces.adapter, "ConnectDevice",
            [.stringVariantMap(["Address": .string(address), "AddressType": .string(addressType)])], timeout: timeout)
        do {
            return try reply.decode(DBusObjectPath.self, at: 0)
        } catch {
            throw Self.decodeFailure(error)
        }
    }

    public func removeDevice(adapter: DBusObjectPath, device: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(adapter, BlueZInterfaces.adapter, "RemoveDevice", [.objectPath(device)])
    }

    // MARK: - AgentManager1

    /// `RegisterAgent`: the agent at `path` on this client's connection answers the pairings
    /// this client starts (bluetoothd asks the caller's agent first, then the default one).
    public func registerAgent(path: DBusObjectPath, capability: String) async throws(BlueZError) {
        _ = try await bluezCall("/org/bluez", BlueZInterfaces.agentManager, "RegisterAgent", [.objectPath(path), .string(capability)])
    }

    // MARK: - Device1

    /// `Pair`: connects if needed and bonds, asking this client's agent what the device's
    /// pairing needs.
    public func pair(device: DBusObjectPath, timeout: Duration) async throws(BlueZError) {
        _ = try await bluezCall(device, BlueZInterfaces.device, "Pair", timeout: timeout)
    }

    public func cancelPairing(device: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(device, BlueZInterfaces.device, "CancelPairing")
    }

    public func connect(device: DBusObjectPath, timeout: Duration = .seconds(45)) async throws(BlueZError) {
        _ = try await bluezCall(device, BlueZInterfaces.device, "Connect", timeout: timeout)
    }

    public func disconnect(device: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(device, BlueZInterfaces.device, "Disconnect")
    }

    // MARK: - GattCharacteristic1

    public func readValue(characteristic: DBusObjectPath, offset: UInt16 = 0) async throws(BlueZError) -> [UInt8] {
        var options: [String: DBusValue] = [:]
        if offset > 0 { options["offset"] = .uint16(offset) }
        let reply = try await bluezCall(characteristic, BlueZInterfaces.gattCharacteristic, "ReadValue", [.stringVariantMap(options)])
        do {
            return try reply.decode([UInt8].self, at: 0)
        } catch {
            throw Self.decodeFailure(error)
        }
    }

    public func writeValue(
        characteristic: DBusObjectPath, _ bytes: [UInt8], type: BlueZWriteType, timeout: Duration = .seconds(30)
    ) async throws(BlueZError) {
        _ = try await bluezCall(
            characteristic, BlueZInterfaces.gattCharacteristic, "WriteValue",
            [.bytes(bytes), .stringVariantMap(["type": .string(type.rawValue)])], timeout: timeout)
    }

    public func startNotify(characteristic: DBusObjectPath, timeout: Duration = .seconds(30)) async throws(BlueZError) {
        _ = try await bluezCall(characteristic, BlueZInterfaces.gattCharacteristic, "StartNotify", timeout: timeout)
    }

    public func stopNotify(characteristic: DBusObjectPath) async throws(BlueZError) {
        _ = try await bluezCall(characteristic, BlueZInterfaces.gattCharacteristic, "StopNotify")
    }

    public func acquireNotify(characteristic: DBusObjectPath, timeout: Duration = .seconds(30)) async throws(BlueZError) -> BlueZAcquiredSocket {
        try await acquire("AcquireNotify", characteristic, timeout: timeout)
    }

    public func acquireWrite(characteristic: DBusObjectPath) async throws(BlueZError) -> BlueZAcquiredSocket {
        try await acquire("AcquireWrite", characteristic)
    }

    private func acquire(
        _ member: String, _ characteristic: DBusObjectPath, timeout: Duration = .seconds(30)
    ) async throws(BlueZError) -> BlueZAcquiredSocket {
        let reply = try await bluezCall(characteristic, BlueZInterfaces.gattCharacteristic, member, [.stringVariantMap([:])], timeout: timeout)
        do {
            let descriptor = try reply.fileDescriptor(at: 0)
            let mtu = try reply.decode(UInt16.self, at: 1)
            return BlueZAcquiredSocket(descriptor: descriptor, mtu: mtu)
        } catch {
            throw Self.decodeFailure(error)
        }
    }
}
