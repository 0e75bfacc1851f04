import BluetoothVocabulary
import DBus
import Foundation
import GATT

// The GATT tree of a connected device and the characteristic methods.

extension BlueZSimulator {
    /// Exports services, characteristics and CCC descriptors under `adapter`'s object for the
    /// device, with BlueZ's paths (`…/serviceXXXX/charXXXX/descXXXX`, attribute handles in 4
    /// hex digits). A cache kept from an earlier link through the same adapter is used again
    /// as it is (unless a missing-service fault changed what the device offers); one kept
    /// under another adapter's object goes first (the simulator keeps one cache per device).
    func exportGATT(_ address: String, on adapter: String) async {
        guard let device = devices[address], let object = device.objects[adapter], let connection else { return }
        let missing = device.faults.missingService.flatMap { BluetoothUUID($0) }
        if device.gattAdapter == adapter, !device.gattPaths.isEmpty, device.gattMissingService == missing { return }
        for path in device.gattPaths.reversed() { try? await connection.unexport(path) }
        devices[address]?.gattPaths.removeAll()
        devices[address]?.characteristics.removeAll()
        devices[address]?.gattAdapter = adapter
        devices[address]?.gattMissingService = missing
        // Handles below 0x000a belong to GAP and GATT, which bluetoothd does not export.
        var handle: UInt16 = 0x000a
        var exportedPaths: [DBusObjectPath] = []
        for service in device.services {
            let serviceHandle = handle
            handle += 1
            guard service.uuid != missing,
                let servicePath = try? object.path.appending(String(format: "service%04x", serviceHandle))
            else {
                handle += UInt16(service.characteristics.count * 3)
                continue
            }
            try? await connection.export(
                Self.serviceInterface(),
                properties: [
                    "UUID": .string(service.uuid.description), "Device": .objectPath(object.path), "Primary": .boolean(true),
                    "Includes": .array(element: .objectPath, []), "Handle": .uint16(serviceHandle),
                ], at: servicePath)
            exportedPaths.append(servicePath)
            for layout in service.characteristics {
                let declaration = handle
                handle += 2
                guard let path = try? servicePath.appending(String(format: "char%04x", declaration)) else { continue }
                var descriptorPaths: [DBusObjectPath] = []
                var properties: [String: DBusValue] = [
                    "UUID": .string(layout.uuid.description), "Service": .objectPath(servicePath), "Value": .bytes(layout.initialValue),
                    "Notifying": .boolean(false), "Flags": .stringArray(layout.flags.bluezFlags), "Handle": .uint16(declaration + 1),
                    "MTU": .uint16(device.configuration.mtu),
                ]
                if layout.notifies { properties["NotifyAcquired"] = .boolean(false) }
                if layout.flags.contains(.writeWithoutResponse) { properties["WriteAcquired"] = .boolean(false) }
                devices[address]?.characteristics[path] = SimulatedCharacteristic(
                    layout: layout, path: path, servicePath: servicePath, descriptorPaths: [], value: layout.initialValue)
                try? await connection.export(characteristicInterface(address, path), properties: properties, at: path)
                exportedPaths.append(path)
                if layout.notifies, let descriptorPath = try? path.appending(String(format: "desc%04x", handle)) {
                    try? await connection.export(
                        descriptorInterface(address, descriptorPath),
                        properties: [
                            "UUID": .string(BluetoothUUID.clientCharacteristicConfiguration.description),
                            "Characteristic": .objectPath(path), "Value": .bytes([0, 0]), "Flags": .stringArray(["read", "write"]),
                            "Handle": .uint16(handle),
                        ], at: descriptorPath)
                    descriptorPaths.append(descriptorPath)
                    exportedPaths.append(descriptorPath)
                    handle += 1
                }
                devices[address]?.characteristics[path]?.descriptorPaths = descriptorPaths
            }
        }
        devices[address]?.gattPaths = exportedPaths
    }

    /// A characteristic of the live link (a cached one answers "Not connected", as BlueZ's
    /// gatt-client does without an ATT bearer).
    func characteristic(_ address: String, _ path: DBusObjectPath) throws -> SimulatedCharacteristic {
        guard let device = devices[address], device.link.isUp, device.gattAdapter == device.linkAdapter,
            let characteristic = device.characteristics[path]
        else {
            throw BlueZError.failed("Not connected")
        }
        return characteristic
    }

    func readValue(_ address: String, _ path: DBusObjectPath, options: [String: DBusValue]) async throws -> [UInt8] {
        let characteristic = try characteristic(address, path)
        guard characteristic.layout.flags.contains(.read) else { throw BlueZError.notPermitted("Read not permitted") }
        let offset = Int((try? options.decodeIfPresent(UInt16.self, forKey: "offset")) ?? 0)
        let epoch = devices[address]?.linkEpoch
        try? await Task.sleep(for: timings.duration(timings.writeLatency))
        if characteristic.layout.uuid == .currentTime, let clock = currentTimeValue(address) {
            devices[address]?.characteristics[path]?.value = clock
        }
        guard devices[address]?.linkEpoch == epoch, let current = devices[address]?.characteristics[path] else {
            throw BlueZError.failed("Not connected")
        }
        guard offset <= current.value.count else { throw BlueZError.invalidOffset() }
        // bluetoothd 5.66 stores every value it reads and announces it once, changed or not,
        // before it answers (src/gatt-client.c: chrc_read_cb → write_characteristic_cb).
        await setProperties(["Value": .bytes(current.value)], of: Self.characteristicInterfaceName, at: path, announcingUnchanged: true)
        return Array(current.value[offset...])
    }

    /// `WriteValue`: commands (write without response) are taken at once, without backpressure;
    /// requests take a round trip and are serialized per characteristic (a concurrent one fails
    /// InProgress).
    func writeValue(_ address: String, _ path: DBusObjectPath, _ value: [UInt8], options: [String: DBusValue]) async throws {
        let characteristic = try characteristic(address, path)
        let flags = characteristic.layout.flags
        let canRequest = flags.contains(.write)
        let canCommand = flags.contains(.writeWithoutResponse)
        guard canRequest || canCommand else { throw BlueZError.notPermitted("Write not permitted") }
        let requested = try? options.decodeIfPresent(String.self, forKey: "type")
        let type = requested ?? (canRequest ? "request" : "command")
        switch type {
        case "command": guard canCommand else { throw BlueZError.notSupported() }
        case "request", "reliable": guard canRequest else { throw BlueZError.notSupported() }
        default: throw BlueZError.invalidArguments()
        }
        let offset = Int((try? options.decodeIfPresent(UInt16.self, forKey: "offset")) ?? 0)
        guard offset <= 512 else { throw BlueZError.invalidOffset() }
        guard offset + value.count <= 512 else { throw BlueZError.invalidValueLength() }
        if type == "command" {
            counters.writesReceived[address, default: 0] += 1
            await received(address, path, value)
            return
        }
        if flags.contains(.write), characteristic.layout.encryptedWrite { try await ensureEncrypted(address) }
        let refusal = writeRefusal(address, path)
        guard devices[address]?.characteristics[path]?.writeInProgress == false else { throw BlueZError.inProgress() }
        devices[address]?.characteristics[path]?.writeInProgress = true
        counters.writesReceived[address, default: 0] += 1
        let epoch = devices[address]?.linkEpoch
        try? await Task.sleep(for: timings.duration(timings.writeLatency))
        guard devices[address]?.linkEpoch == epoch, devices[address]?.characteristics[path] != nil else {
            throw BlueZError.failed("Not connected")
        }
        devices[address]?.characteristics[path]?.writeInProgress = false
        if let refusal {
            counters.writesRefused[address, default: 0] += 1
            throw BlueZError.attError(refusal)
        }
        if characteristic.layout.uuid == .currentTime, devices[address]?.measurement != nil {
            try writeCurrentTime(address, path, value)
            return
        }
        await received(address, path, value)
    }

    /// The ATT error the device refuses writes to the characteristic at `path` with (a
    /// `reject-writes` fault), nil when it takes them.
    func writeRefusal(_ address: String, _ path: DBusObjectPath) -> UInt8? {
        guard let device = devices[address], let text = device.faults.rejectWritesUUID, let refused = BluetoothUUID(text),
            device.characteristics[path]?.layout.uuid == refused
        else { return nil }
        return UInt8(clamping: device.faults.rejectWritesATTError ?? Self.refusedWriteDefaultATTError)
    }

    /// What the device does with a value written to it. A write without response it refuses
    /// (`reject-writes`) is dropped: such a write is never answered, so nobody hears of it.
    func received(_ address: String, _ path: DBusObjectPath, _ value: [UInt8]) async {
        guard let characteristic = devices[address]?.characteristics[path] else { return }
        if writeRefusal(address, path) != nil {
            counters.writesRefused[address, default: 0] += 1
            return
        }
        guard characteristic.layout.uuid == .motionBandControl else {
            devices[address]?.characteristics[path]?.value = value
            return
        }
        let before = devices[address]?.signals.motionRateHz
        guard let reply = devices[address]?.signals.control(value) else { return }
        await deliver(address, path, reply)
        if devices[address]?.signals.motionRateHz != before { restartMotionStream(address) }
    }

    func readDescriptor(_ address: String, _ path: DBusObjectPath) async throws -> [UInt8] {
        guard let device = devices[address], device.link.isUp, device.gattAdapter == device.linkAdapter,
            let owner = device.characteristics.values.first(where: { $0.descriptorPaths.contains(path) })
        else { throw BlueZError.failed("Not connected") }
        return owner.isNotifying ? [owner.layout.flags.contains(.indicate) ? 0x02 : 0x01, 0x00] : [0x00, 0x00]
    }

    // MARK: - Notify sessions

    /// `StartNotify`: on a characteristic whose CCC the device guards (a measurement), the link is
    /// encrypted first (`ensureEncrypted`); its indications then start with the device's queue.
    func startNotify(_ address: String, _ path: DBusObjectPath, client: String) async throws {
        await releaseClosedNotifySocket(address, path)
        let characteristic = try characteristic(address, path)
        guard characteristic.layout.notifies else { throw BlueZError.notSupported() }
        guard characteristic.notifySocket == nil else { throw BlueZError.notPermitted("Notify acquired") }
        guard !characteristic.notifyClients.contains(client) else { return }
        let epoch = devices[address]?.linkEpoch
        if characteristic.layout.encryptedSubscribe, !characteristic.subscribedOnLink {
            try await ensureEncrypted(address)
            guard devices[address]?.linkEpoch == epoch, devices[address]?.characteristics[path] != nil else {
                throw BlueZError.failed("Not connected")
            }
            guard devices[address]?.characteristics[path]?.notifyClients.contains(client) == false else { return }
        }
        let wasNotifying = devices[address]?.characteristics[path]?.isNotifying ?? false
        devices[address]?.characteristics[path]?.notifyClients.insert(client)
        devices[address]?.characteristics[path]?.subscribedOnLink = true
        if !wasNotifying {
            await setProperties(["Notifying": .boolean(true)], of: Self.characteristicInterfaceName, at: path)
            startStream(address, path)
        }
        startRecordBurst(address)
    }

    /// `StopNotify`; a session a measurement device kept through a disconnect can be stopped while
    /// the device is away, as bluetoothd 5.66 stops one without a link.
    func stopNotify(_ address: String, _ path: DBusObjectPath, client: String) async throws {
        let characteristic: SimulatedCharacteristic
        if let kept = devices[address]?.characteristics[path], kept.notifyClients.contains(client), devices[address]?.link.isUp != true {
            characteristic = kept
        } else {
            characteristic = try self.characteristic(address, path)
        }
        guard characteristic.notifyClients.contains(client) else { throw BlueZError.failed("No notify session started") }
        devices[address]?.characteristics[path]?.notifyClients.remove(client)
        await notifySessionEnded(address, path)
    }

    /// Ends an AcquireNotify session whose client closed its socket, as BlueZ does when it sees
    /// the hang-up: `NotifyAcquired` turns false, and notifying stops if nobody else listens.
    func notifySocketClosed(_ address: String, _ path: DBusObjectPath) async {
        guard let socket = devices[address]?.characteristics[path]?.notifySocket else { return }
        socket.close()
        devices[address]?.characteristics[path]?.notifySocket = nil
        await setProperties(["NotifyAcquired": .boolean(false)], of: Self.characteristicInterfaceName, at: path)
        await notifySessionEnded(address, path)
    }

    /// A session that a client ended by closing its socket must not block the next one (BlueZ
    /// would have released it already).
    private func releaseClosedNotifySocket(_ address: String, _ path: DBusObjectPath) async {
        guard devices[address]?.characteristics[path]?.notifySocket?.peerHasClosed == true else { return }
        await notifySocketClosed(address, path)
    }

    /// When the last session of a characteristic ends, it stops notifying.
    func notifySessionEnded(_ address: String, _ path: DBusObjectPath) async {
        guard let characteristic = devices[address]?.characteristics[path], !characteristic.isNotifying else { return }
        devices[address]?.characteristics[path]?.subscribedOnLink = false
        devices[address]?.characteristics[path]?.streamTask?.cancel()
        devices[address]?.characteristics[path]?.streamTask = nil
        await setProperties(["Notifying": .boolean(false)], of: Self.characteristicInterfaceName, at: path)
    }

    func acquireNotify(_ address: String, _ path: DBusObjectPath) async throws -> [DBusValue] {
        await releaseClosedNotifySocket(address, path)
        let characteristic = try characteristic(address, path)
        guard characteristic.layout.notifies else { throw BlueZError.notSupported() }
        guard characteristic.notifySocket == nil else { throw BlueZError.notPermitted("Notify acquired") }
        guard characteristic.notifyClients.isEmpty else { throw BlueZError.inProgress() }
        if characteristic.layout.encryptedSubscribe {
            let epoch = devices[address]?.linkEpoch
            try await ensureEncrypted(address)
            guard devices[address]?.linkEpoch == epoch, let current = devices[address]?.characteristics[path] else {
                throw BlueZError.failed("Not connected")
            }
            guard current.notifySocket == nil else { throw BlueZError.notPermitted("Notify acquired") }
            guard current.notifyClients.isEmpty else { throw BlueZError.inProgress() }
        }
        let (local, remote) = try SeqPacketPair.make()
        devices[address]?.characteristics[path]?.notifySocket = NotifySocket(fd: local)
        devices[address]?.characteristics[path]?.subscribedOnLink = true
        await setProperties(
            ["NotifyAcquired": .boolean(true), "Notifying": .boolean(true)], of: Self.characteristicInterfaceName, at: path)
        startStream(address, path)
        startRecordBurst(address)
        // libdbus duplicates the descriptor into the reply; this copy closes when the reply is gone.
        return [.unixFD(DBusFileDescriptor(owning: remote)), .uint16(devices[address]?.configuration.mtu ?? 23)]
    }

    func acquireWrite(_ address: String, _ path: DBusObjectPath) async throws -> [DBusValue] {
        let characteristic = try characteristic(address, path)
        guard characteristic.layout.flags.contains(.writeWithoutResponse) else { throw BlueZError.notSupported() }
        guard characteristic.writeSocket == nil else { throw BlueZError.notPermitted("Write acquired") }
        let (local, remote) = try SeqPacketPair.make()
        let epoch = devices[address]?.linkEpoch ?? 0
        let (packets, continuation) = AsyncStream<[UInt8]>.makeStream()
        let reader = WriteSocketReader(
            fd: local, onPacket: { continuation.yield($0) }, onClose: { continuation.finish() })
        devices[address]?.characteristics[path]?.writeSocket = reader
        await setProperties(["WriteAcquired": .boolean(true)], of: Self.characteristicInterfaceName, at: path)
        // One consumer keeps the client's datagrams in order.
        Task {
            for await packet in packets {
                guard self.devices[address]?.linkEpoch == epoch else { continue }
                self.counters.writesReceived[address, default: 0] += 1
                await self.received(address, path, packet)
            }
            await self.writeSocketClosed(address, path, epoch: epoch)
        }
        return [.unixFD(DBusFileDescriptor(owning: remote)), .uint16(devices[address]?.configuration.mtu ?? 23)]
    }

    func writeSocketClosed(_ address: String, _ path: DBusObjectPath, epoch: Int) async {
        guard devices[address]?.linkEpoch == epoch, devices[address]?.characteristics[path]?.writeSocket != nil else { return }
        devices[address]?.characteristics[path]?.writeSocket = nil
        await setProperties(["WriteAcquired": .boolean(false)], of: Self.characteristicInterfaceName, at: path)
    }
}
