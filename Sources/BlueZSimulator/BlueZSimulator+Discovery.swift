import DBus
import Foundation
import GATT

// Discovery, device appearance, RSSI updates and TemporaryTimeout expiry.

extension BlueZSimulator {
    static let discoveryFilterKeys: Set<String> = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    func startDiscovery(adapter name: String, client: String) async throws {
        guard let adapter = adapters[name], adapter.powered else { throw BlueZError.notReady() }
        guard !adapter.discoveryClients.contains(client) else { throw BlueZError.busy() }
        adapters[name]?.discoveryClients.insert(client)
        // bluetoothd starts the kernel's discovery for a new client at once
        // (`update_discovery_filter` → `trigger_start_discovery(adapter, 0)`), ending a wait to
        // resume after a pairing.
        adapters[name]?.discoveryResumesAt = nil
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
        // The kernel's discovery ends with the last client's: the next one scans afresh, and
        // at once (bluetoothd's wait to resume after a pairing ends with it).
        adapters[name]?.discoveryStalled = false
        adapters[name]?.discoveryResumesAt = nil
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

    /// While an adapter discovers, the in-range devices it hears advertise unless they hold a
    /// link (a peripheral that is connected stops advertising), here or through another gateway
    /// of a shared world: each interval a device is heard
    /// with some probability (advertisements get lost), its object on this adapter appearing
    /// the first time (InterfacesAdded) and its RSSI on this adapter updated afterwards.
    private func discover(adapter name: String) async {
        adapters[name]?.lastDiscoveryPass = nil
        while !Task.isCancelled {
            let passStart = ContinuousClock.now
            let filter = mergedFilter(adapter: name)
            let heardProbability = probabilityOfHearing(sinceLastPassOf: name)
            let heldElsewhere = devicesHeldElsewhereInWorld()
            for address in everyAddress {
                guard let device = devices[address], let object = device.objects[name], device.advertises,
                    device.link == .disconnected, !heldElsewhere.contains(address)
                else { continue }
                guard let draw = devices[address]?.random.unit(), draw < heardProbability else { continue }
                if let uuids = filter.uuids, uuids.isDisjoint(with: device.advertisedUUIDs) { continue }
                if let threshold = filter.rssi, object.rssi < threshold { continue }
                // A stalled scan (`stall-discovery`), or one bluetoothd stopped for a pairing,
                // hears nothing: not even lastSeen moves.
                if adapters[name]?.discoveryStalled == true || adapters[name]?.discoverySuspended(at: .now) == true {
                    counters.advertisementsUnreported[address, default: 0] += 1
                    continue
                }
                devices[address]?.objects[name]?.lastSeen = .now
                if !object.exported {
                    _ = devices[address]?.nextRSSI(on: name)
                    await exportDevice(address, on: name, seen: true)
                } else if let rssi = devices[address]?.nextRSSI(on: name) {
                    await setProperties(["RSSI": .int16(rssi)], of: Self.deviceInterfaceName, at: object.path)
                }
            }
            adapters[name]?.lastDiscoveryPass = passStart
            try? await Task.sleep(for: timings.duration(timings.advertisingInterval))
        }
    }

    /// Each advertisement is lost with probability 0.2. A pass normally follows the last one by
    /// one advertising interval; one that comes late (the process was starved) stands for every
    /// interval since, whose reports the controller queued: the device is heard unless all of
    /// them were lost.
    private func probabilityOfHearing(sinceLastPassOf adapter: String) -> Double {
        let lossPerAdvertisement = 0.2
        guard let last = adapters[adapter]?.lastDiscoveryPass else {
            return 1 - lossPerAdvertisement
        }
        let interval = timings.duration(timings.advertisingInterval)
        guard interval > .zero else { return 1 - lossPerAdvertisement }
        let intervals = max(1, (ContinuousClock.now - last) / interval)
        return 1 - pow(lossPerAdvertisement, intervals)
    }

    /// Exports `adapter`'s Device1 object for a device (InterfacesAdded from `/`).
    func exportDevice(_ address: String, on adapter: String, seen: Bool) async {
        guard let device = devices[address], let object = device.objects[adapter], !object.exported, !object.unexporting,
            let connection
        else { return }
        devices[address]?.objects[adapter]?.exported = true
        devices[address]?.objects[adapter]?.lastSeen = .now
        guard let current = devices[address] else { return }
        do {
            try await connection.export(
                deviceInterface(address, adapter: adapter), properties: deviceProperties(current, on: adapter, withRSSI: seen),
                at: object.path)
        } catch {
            // Not on the bus (the connection is closing): it is not there for anyone.
            devices[address]?.objects[adapter]?.exported = false
        }
    }

    /// Removes `adapter`'s object for a device, with the GATT objects kept under it
    /// (InterfacesRemoved); later calls on it fail with UnknownObject.
    func removeDeviceObject(_ address: String, on adapter: String) async {
        guard let device = devices[address], let object = device.objects[adapter], object.exported else { return }
        devices[address]?.objects[adapter]?.exported = false
        devices[address]?.objects[adapter]?.unexporting = true
        defer { devices[address]?.objects[adapter]?.unexporting = false }
        if device.gattAdapter == adapter {
            for path in device.characteristics.keys { devices[address]?.characteristics[path]?.tearDown() }
            devices[address]?.characteristics.removeAll()
            devices[address]?.gattPaths.removeAll()
            devices[address]?.gattAdapter = nil
            for path in device.gattPaths.reversed() { try? await connection?.unexport(path) }
        }
        try? await connection?.unexport(object.path)
    }

    /// Each adapter's temporary object for a device (only heard: never bonded, connected or
    /// paired through that adapter) goes `TemporaryTimeout` after that adapter last heard it,
    /// unless the link goes through it (BlueZ's `src/device.c`: the temporary timer restarts on
    /// every advertising report, `device_update_last_seen`, and is cleared while connected,
    /// `device_add_connection`; `device_disappeared` removes the device). Another adapter's
    /// object for a device linked elsewhere expires on its own timer. While the adapter
    /// discovers, "now" is the start of its discovery loop's last whole pass: bluetoothd's timer and the
    /// reports that restart it share one main loop, so a report already in flight is never
    /// outrun by the timer it would have restarted.
    func sweepExpiredDevices() async {
        let period = timings.duration(max(0.01, timings.temporaryTimeout / 5))
        let timeout = timings.duration(timings.temporaryTimeout)
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            let wallClock = ContinuousClock.now
            for address in everyAddress {
                guard let device = devices[address] else { continue }
                for adapter in device.configuration.heardBy {
                    let discovering = adapters[adapter]?.discoveryTask != nil
                    let now = discovering ? (adapters[adapter]?.lastDiscoveryPass ?? wallClock) : wallClock
                    guard let object = device.objects[adapter], object.exported, object.temporary,
                        device.linkAdapter != adapter, now - object.lastSeen > timeout
                    else { continue }
                    await removeDeviceObject(address, on: adapter)
                }
            }
            reapPassersBy()
        }
    }

    func removeDevice(adapter name: String, path: DBusObjectPath) async throws {
        guard let device = devices.values.first(where: { $0.objects[name]?.path == path && $0.objects[name]?.exported == true })
        else { throw BlueZError.doesNotExist() }
        // bluetoothd forgets it, on disk too: heard again, it is a new temporary device. Its
        // object goes at once (src/adapter.c `btd_adapter_remove_device` → `device_remove`,
        // in the same call), before the link it ends, so nothing can connect to the object on
        // its way out; the link's end is no property change of an object that is gone.
        devices[device.address]?.objects[name]?.paired = false
        devices[device.address]?.objects[name]?.bonded = false
        devices[device.address]?.objects[name]?.temporary = true
        let linked = device.linkAdapter == name
        await removeDeviceObject(device.address, on: name)
        if linked { await dropLink(device.address, reason: .local, announce: false) }
    }

    /// `ConnectDevice` (experimental: offered only with `BlueZSettings.experimental`):
    /// connects to an address without discovery, creating this adapter's object for it.
    func connectDevice(adapter name: String, properties: [String: DBusValue]) async throws -> DBusObjectPath {
        guard let adapter = adapters[name], adapter.powered else { throw BlueZError.notReady() }
        guard case .string(let text)? = properties["Address"]?.unwrappingVariant,
            let address = try? DeviceAddress.normalized(text)
        else { throw BlueZError.invalidArguments() }
        if case .string(let type)? = properties["AddressType"]?.unwrappingVariant, type != "public", type != "random" {
            throw BlueZError.invalidArguments()
        }
        guard let device = devices[address], let object = device.objects[name] else {
            // Nobody answers at that address: the attempt times out.
            try? await Task.sleep(for: timings.duration(timings.connectTimeout))
            throw BlueZError.failed(BlueZError.abortByLocal)
        }
        guard !object.exported else { throw BlueZError.alreadyExists() }
        await exportDevice(address, on: name, seen: false)
        try await connect(address, adapter: name)
        return object.path
    }
}
