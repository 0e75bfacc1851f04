import TOML
import FleetCore

extension ConfigurationDecoder {
    /// `[[pinned]]` entries in order. The same address twice in one file is an error naming both
    /// lines; an address pinned again by a later file replaces the earlier entry in place (a
    /// drop-in may re-pin a device with another class or priority).
    mutating func decodePinned(_ nodes: [TOMLNode]) -> [PinnedDevice] {
        var devices: [PinnedDevice] = []
        var indexByAddress: [BluetoothAddress: Int] = [:]
        for node in nodes {
            guard case .table(let table) = node.value else {
                report("'pinned' must be an array of tables ([[pinned]]), found \(node.value.typeDescription) in it", at: node.position)
                continue
            }
            guard let device = decodePinnedDevice(ConfigSection(table: table, name: "[[pinned]]")) else { continue }
            if let index = indexByAddress[device.id.address] {
                let earlier = devices[index].definedAt
                if earlier.file == device.definedAt.file {
                    let addressLine = table["address"]?.node.position ?? device.definedAt
                    report("device \(device.id.address) is pinned twice (also at \(earlier.file):\(earlier.line))", at: addressLine)
                } else {
                    devices[index] = device
                }
                continue
            }
            indexByAddress[device.id.address] = devices.count
            devices.append(device)
        }
        return devices
    }

    mutating func decodePinnedDevice(_ section: ConfigSection) -> PinnedDevice? {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.pinned)
        var valid = true
        var address: BluetoothAddress?
        if let (text, position) = string(section, "address") {
            address = BluetoothAddress(text)
            if address == nil {
                report("'address' in [[pinned]]: '\(text)' is not a Bluetooth address (expected six hex pairs such as AA:BB:CC:DD:EE:FF)", at: position)
            }
        } else if section["address"] == nil {
            report("[[pinned]] entry has no 'address'", at: section.table.position)
        }
        var addressType = AddressType.public
        if let (text, position) = string(section, "address_type") {
            if let type = AddressType(rawValue: text) {
                addressType = type
            } else {
                report("'address_type' in [[pinned]]: '\(text)' must be \"public\" or \"random\"", at: position)
                valid = false
            }
        }
        let name = string(section, "name")?.value
        var className = DeviceClassSettings.defaultName
        if let (value, position) = self.name(section, "class") {
            className = value
            classReferences.append((value, position, "[[pinned]] \(address?.description ?? "entry")"))
        } else if section["class"] != nil {
            valid = false
        }
        let priority = integer(section, "priority", in: FleetPinOptions.priorities)
        if section["priority"] != nil, priority == nil { valid = false }
        if section["name"] != nil, name == nil { valid = false }
        let preferredGateways = preferredGateways(section)
        if section["preferred_gateways"] != nil, preferredGateways == nil { valid = false }
        guard let address, valid else { return nil }
        return PinnedDevice(
            id: DeviceID(address: address, addressType: addressType),
            name: name, className: className, priority: priority ?? 0,
            preferredGateways: preferredGateways ?? [],
            definedAt: section.table.position
        )
    }
}
