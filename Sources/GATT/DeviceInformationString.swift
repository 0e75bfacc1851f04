// Device Information strings identify hardware in logs and the state file. Many devices pad them
// with NULs; those are stripped. Invalid UTF-8 is an error, never silently replaced.

/// One of the Device Information Service's UTF-8 string characteristics (0x2A24...0x2A29).
///
/// The whole payload is the string. Trailing NUL bytes are removed before validation; any other
/// ill-formed UTF-8 throws `.invalidUTF8`.
public struct DeviceInformationString: Hashable, Sendable {
    /// Which string characteristic this is.
    public enum Field: String, Hashable, Sendable, CaseIterable {
        case modelNumber = "model_number"
        case serialNumber = "serial_number"
        case firmwareRevision = "firmware_revision"
        case hardwareRevision = "hardware_revision"
        case softwareRevision = "software_revision"
        case manufacturerName = "manufacturer_name"

        public var uuid: BluetoothUUID {
            switch self {
            case .modelNumber: .modelNumberString
            case .serialNumber: .serialNumberString
            case .firmwareRevision: .firmwareRevisionString
            case .hardwareRevision: .hardwareRevisionString
            case .softwareRevision: .softwareRevisionString
            case .manufacturerName: .manufacturerNameString
            }
        }
    }

    public var field: Field
    public var value: String

    public init(field: Field, value: String) {
        self.field = field
        self.value = value
    }

    public static func decode(_ bytes: some Collection<UInt8>, field: Field) throws(GATTDecodeError) -> DeviceInformationString {
        var length = bytes.count
        var end = bytes.endIndex
        while length > 0 {
            let last = bytes.index(bytes.startIndex, offsetBy: length - 1)
            guard bytes[last] == 0 else { break }
            end = last
            length -= 1
        }
        var reader = ByteReader(bytes[bytes.startIndex..<end])
        return try DeviceInformationString(field: field, value: reader.readRemainingUTF8("string"))
    }

    public func encode() -> [UInt8] { Array(value.utf8) }
}

extension DeviceInformationString: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { [(field.rawValue, value)] }
    public var summary: String { "\(field.rawValue.replacing("_", with: " ")): \(value)" }
}
