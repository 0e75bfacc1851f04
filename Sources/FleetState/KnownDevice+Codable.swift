import FleetCore
import FoundationEssentials

/// The on-disk form of one device. Keys are spelled out (not synthesized) so renaming a Swift
/// property can never silently change the file format.
extension KnownDevice: Codable {
    enum CodingKeys: String, CodingKey {
        case address, addressType, adapter, name, deviceClass, appearance, servicesSeen, lastConnected, lastSeen, membership
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let addressText = try container.decode(String.self, forKey: .address)
        guard let address = BluetoothAddress(addressText) else {
            throw DecodingError.dataCorruptedError(
                forKey: .address, in: container, debugDescription: "not a Bluetooth address: \(addressText)")
        }
        let typeText = try container.decode(String.self, forKey: .addressType)
        guard let addressType = AddressType(rawValue: typeText) else {
            throw DecodingError.dataCorruptedError(
                forKey: .addressType, in: container, debugDescription: "unknown address type: \(typeText)")
        }
        self.init(
            id: DeviceID(address: address, addressType: addressType),
            adapter: try container.decodeIfPresent(String.self, forKey: .adapter).map(AdapterID.init),
            name: try container.decodeIfPresent(String.self, forKey: .name),
            deviceClass: try container.decodeIfPresent(UInt32.self, forKey: .deviceClass),
            appearance: try container.decodeIfPresent(UInt16.self, forKey: .appearance),
            servicesSeen: try container.decodeIfPresent([String].self, forKey: .servicesSeen) ?? [],
            lastConnected: try container.decodeIfPresent(Date.self, forKey: .lastConnected),
            lastSeen: try container.decodeIfPresent(Date.self, forKey: .lastSeen),
            membership: try container.decodeIfPresent(Membership.self, forKey: .membership) ?? .pool
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.address.description, forKey: .address)
        try container.encode(id.addressType.rawValue, forKey: .addressType)
        try container.encodeIfPresent(adapter?.name, forKey: .adapter)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(deviceClass, forKey: .deviceClass)
        try container.encodeIfPresent(appearance, forKey: .appearance)
        try container.encode(servicesSeen, forKey: .servicesSeen)
        try container.encodeIfPresent(lastConnected, forKey: .lastConnected)
        try container.encodeIfPresent(lastSeen, forKey: .lastSeen)
        try container.encode(membership, forKey: .membership)
    }
}
