import DBus
import GATT

// Discovery, device appearance, RSSI updates and TemporaryTimeout expiry.

extension BlueZSimulator {
    static let discoveryFilterKeys: Set<String> = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    func startDiscovery(adapter name: String, client: String) async throws {
        guard let adapter = adapters[name], adapter.powered else { throw BlueZError.notReady() }
        guard !adapter.discoveryClients.contains(client) else { throw BlueZError.busy() }
        adapters[name]?.discoveryClients.insert(client)
        guard adapter.discoveryClients.isEmpty else { return }
        adapters[name]?.discoveryTask = Task { await self.discover(adapter: name) }
        await setProperties(["Discovering": .boolean(true)], of: Self.adapterInterfaceName, at: adapter.path)
    }

    func stopDiscovery(adapter name: String, client: String) async throws {
        guard let adapter = adapters[name], adapter.powered else { throw BlueZError.notReady() }
        guard adapter.discoveryClients.contains(client) else { throw BlueZError.failed("No discovery started") }
        adapters[name]?.discoveryClients.remove(client)
        adapters[name]?.discoveryFilters[client] = nil
        guard adapters[name]?.discoveryClients.isEmpty == true else { return }
        adapters[name]?.discoveryTask?.cancel()
        adapters[name]?.discoveryTask = nil
        await setProperties(["Discovering": .boolean(false)], of: Self.adapterInterfaceName, at: adapter.path)
    }

    /// Validates the filter as BlueZ does (known keys with their types, `Transport` one of
    /// auto/bredr/le) and keeps it for the client; an empty filter clears it.
    func setDiscoveryFilter(adapter name: String, client: String, filter: [String: DBusValue]) async throws {
        guard adapters[name]?.powered == true else { throw BlueZError.notReady() }
        for (key, value) in filter {
            let expected: DBusType
            switch key {
            case "UUIDs": expected = .array(.string)
            case "RSSI": expected = .int16
            case "Pathloss": expected = .uint16
            case "Transport", "Pattern": expected = .string
            case "DuplicateData", "Discoverable": expected = .boolean
            default: throw BlueZError.invalidArguments()
            }
            guard value.type == expected else { throw BlueZError.invalidArguments() }
            if key == "Transport", case .string(let transport) = value, !["auto", "bredr", "le"].contains(transport) {
                throw BlueZError.invalidArguments()
            }
            if key == "UUIDs", case .array(_, let items) = value {
                for case .string(let uuid) in items where BluetoothUUID(uuid) == nil { throw BlueZError.invalidArguments() }
            }
        }
        adapters[name]?.discoveryFilters[client] = filter.isEmpty ? nil : filter
    }

    /// The filter in force: BlueZ merges the discovering clients' filters, and does not filter
    /// at all as soon as one of them has none. UUIDs are united (none: any device), the lowest
    /// RSSI threshold wins.
    func mergedFilter(adapter name: String) -> (uuids: Set<String>?, rssi: Int16?) {
        guard let adapter = adapters[name], !adapter.discoveryClients.isEmpty else { return (nil, nil) }
        var uuids: Set<String>? = []
        var rssi: Int16? = .max
        for client in adapter.discoveryClients {
            guard let filter = adapter.discoveryFilters[client] else { return (nil, nil) }
            if case .array(_, let items)? = filter["UUIDs"], !items.isEmpty {
                for case .string(let text) in items {
                    if let uuid = BluetoothUUID(text) { uuids?.insert(uuid.description) }
                }
            } else {
                uuids = nil
            }
            if case .int16(let threshold)? = filter["RSSI"] {
                rssi = rssi.map { min($0, threshold) }
            } else {
                rssi = nil
            }
        }
        return (uuids, rssi)
    }

    /// While an adapter discovers, its in-range, unconnected devices advertise: each interval a
    /// device is heard with some probability (advertisements get lost), appearing the first time
    /// (InterfacesAdded) and updating RSSI afterwards.
    private func discover(adapter name: String) async {
        while !Task.isCancelled {
            let filter = mergedFilter(adapter: name)
            for address in deviceAddresses {
                guard let device = devices[address], device.adapterPath == adapters[name]?.path, device.inRange,
                    device.link == .disconnected
                else { continue }
                guard let heard = devices[address]?.random.unit(), heard < 0.8 else { continue }
                if let uuids = filter.uuids, uuids.isDisjoint(with: device.advertisedUUIDs) { continue }
                if let threshold = filter.rssi, device.rssi < threshold { continue }
                devices[address]?.lastSeen = .now
                if !device.exported {
                    _ = devices[address]?.nextRSSI()
                    await exportDevice(address, seen: true)
                } else if let rssi = devices[address]?.nextRSSI() {
                    await setProperties(["RSSI": .int16(rssi)], of: Self.deviceInterfaceName, at: device.path)
                }
            }
            try? await Task.sleep(for: timings.duration(timings.advertisingInterval))
        }
    }

    /// Exports a device's Device1 object (InterfacesAdded from `/`).
    func exportDevice(_ address: String, seen: Bool) async {
        guard let device = devices[address], !device.exported, let connection else { return }
        devices[address]?.exported = true
        devices[address]?.lastSeen = .now
        try? await connection.export(deviceInterface(address), properties: deviceProperties(device, withRSSI: seen), at: device.path)
    }

    /// Removes a device object (InterfacesRemoved); later calls on it fail with UnknownObject.
    func removeDeviceObject(_ address: String) async {
        guard let device = devices[address], device.exported else { return }
        devices[address]?.exported = false
        try? await connection?.unexport(device.path)
    }

    /// Unbonded, disconnected devices not heard for `TemporaryTimeout` disappear.
    func sweepExpiredDevices() async {
        let period = timings.duration(max(0.01, timings.temporaryTimeout / 5))
        let timeout = timings.duration(timings.temporaryTimeout)
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            let now = ContinuousClock.now
            for address in deviceAddresses {
                guard let device = devices[address], device.exported, !device.bonded, !device.paired,
                    device.link == .disconnected, now - device.lastSeen > timeout
                else { continue }
                await removeDeviceObject(address)
            }
        }
    }

    func removeDevice(adapter name: String, path: DBusObjectPath) async throws {
        guard let device = devices.values.first(where: { $0.path == path && $0.exported }),
            device.adapterPath == adapters[name]?.path
        else { throw BlueZError.doesNotExist() }
        await dropLink(device.address, reason: .local, announce: true)
        devices[device.address]?.paired = false
        devices[device.address]?.bonded = false
        await removeDeviceObject(device.address)
    }

    /// `ConnectDevice`: connects to an address without discovery (creating its object).
    func connectDevice(adapter name: String, properties: [String: DBusValue]) async throws -> DBusObjectPath {
        guard let adapter = adapters[name], adapter.powered else { throw BlueZError.notReady() }
        guard case .string(let text)? = properties["Address"]?.unwrappingVariant,
            let address = try? DeviceAddress.normalized(text)
        else { throw BlueZError.invalidArguments() }
        if case .string(let type)? = properties["AddressType"]?.unwrappingVariant, type != "public", type != "random" {
            throw BlueZError.invalidArguments()
        }
        guard let device = devices[address], device.adapterPath == adapter.path else {
            // Nobody answers at that address: the attempt times out.
            try? await Task.sleep(for: timings.duration(timings.connectTimeout))
            throw BlueZError.failed(BlueZError.abortByLocal)
        }
        guard !device.exported else { throw BlueZError.alreadyExists() }
        await exportDevice(address, seen: false)
        try await connect(address)
        return device.path
    }
}
