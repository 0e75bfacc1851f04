// The simulator and tests produce notifications from typed values; encoding through the event
// keeps the UUID and the wire format together, exactly as the registry pairs them for decoding.

extension CharacteristicEvent {
    /// The characteristic this event belongs to (the one the registry decoded it from).
    public var uuid: BluetoothUUID {
        switch self {
        case .heartRateMeasurement: .heartRateMeasurement
        case .bodySensorLocation: .bodySensorLocation
        case .batteryLevel: .batteryLevel
        case .deviceInformation(let value): value.field.uuid
        case .systemID: .systemID
        case .pnpID: .pnpID
        case .temperatureMeasurement: .temperatureMeasurement
        case .intermediateTemperature: .intermediateTemperature
        case .plxSpotCheckMeasurement: .plxSpotCheckMeasurement
        case .plxContinuousMeasurement: .plxContinuousMeasurement
        case .bloodPressureMeasurement: .bloodPressureMeasurement
        case .rscMeasurement: .rscMeasurement
        case .cscMeasurement: .cscMeasurement
        case .weightMeasurement: .weightMeasurement
        case .currentTime: .currentTime
        case .dateTime: .dateTime
        case .raw(let value): value.uuid
        }
    }

    /// The payload that decodes back to this event through `CharacteristicRegistry.standard`.
    /// Reserved flag bits and trailing bytes of the original payload are not reproduced.
    public func encode() throws(GATTEncodeError) -> [UInt8] {
        switch self {
        case .heartRateMeasurement(let value): try value.encode()
        case .bodySensorLocation(let value): value.encode()
        case .batteryLevel(let value): value.encode()
        case .deviceInformation(let value): value.encode()
        case .systemID(let value): try value.encode()
        case .pnpID(let value): value.encode()
        case .temperatureMeasurement(let value): try value.encode()
        case .intermediateTemperature(let value): try value.encode()
        case .plxSpotCheckMeasurement(let value): try value.encode()
        case .plxContinuousMeasurement(let value): try value.encode()
        case .bloodPressureMeasurement(let value): try value.encode()
        case .rscMeasurement(let value): value.encode()
        case .cscMeasurement(let value): value.encode()
        case .weightMeasurement(let value): value.encode()
        case .currentTime(let value): value.encode()
        case .dateTime(let value): value.encode()
        case .raw(let value): value.bytes
        }
    }
}
