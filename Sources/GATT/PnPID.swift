// PnP ID lets the daemon recognise a device model (vendor and product) independent of its name.

/// The PnP ID characteristic (0x2A50): Vendor ID Source (1), Vendor ID (2), Product ID (2),
/// Product Version (2, 0xJJMN = major.minor.sub-minor). Unknown vendor ID sources decode to
/// `.reserved(value)`.
public struct PnPID: Hashable, Sendable {
    /// Who assigned `vendorID`.
    public enum VendorIDSource: Hashable, Sendable {
        case bluetoothSIG
        case usbImplementersForum
        case reserved(UInt8)

        public init(rawValue: UInt8) {
            switch rawValue {
            case 1: self = .bluetoothSIG
            case 2: self = .usbImplementersForum
            default: self = .reserved(rawValue)
            }
        }

        public var rawValue: UInt8 {
            switch self {
            case .bluetoothSIG: 1
            case .usbImplementersForum: 2
            case .reserved(let value): value
            }
        }

        public var name: String {
            switch self {
            case .bluetoothSIG: "bluetooth_sig"
            case .usbImplementersForum: "usb_if"
            case .reserved(let value): "reserved_\(value)"
            }
        }
    }

    public var vendorIDSource: VendorIDSource
    public var vendorID: UInt16
    public var productID: UInt16
    public var productVersion: UInt16

    public init(vendorIDSource: VendorIDSource, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> PnPID {
        var reader = ByteReader(bytes)
        let source = try VendorIDSource(rawValue: reader.readUInt8("vendor_id_source"))
        let vendor = try reader.readUInt16("vendor_id")
        let product = try reader.readUInt16("product_id")
        let version = try reader.readUInt16("product_version")
        return PnPID(vendorIDSource: source, vendorID: vendor, productID: product, productVersion: version)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.writeUInt8(vendorIDSource.rawValue)
        writer.writeUInt16(vendorID)
        writer.writeUInt16(productID)
        writer.writeUInt16(productVersion)
        return writer.bytes
    }

    /// `major.minor.subminor` from the 0xJJMN version field.
    public var productVersionText: String {
        "\(productVersion >> 8).\((productVersion >> 4) & 0xF).\(productVersion & 0xF)"
    }
}

extension PnPID: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        [
            ("vendor_id_source", vendorIDSource.name),
            ("vendor_id", "0x" + DecimalText.hex(UInt64(vendorID), digits: 4)),
            ("product_id", "0x" + DecimalText.hex(UInt64(productID), digits: 4)),
            ("product_version", productVersionText),
        ]
    }

    public var summary: String {
        "vendor 0x\(DecimalText.hex(UInt64(vendorID), digits: 4)) product 0x\(DecimalText.hex(UInt64(productID), digits: 4)) v\(productVersionText)"
    }
}
