// The runtime receives (UUID, bytes) from BlueZ and must not know which decoder applies: the
// registry is that table, in one place, so adding a characteristic is one line here.

/// Maps characteristic UUIDs to decoders producing `CharacteristicEvent`s.
///
/// Immutable after construction and `Sendable`, so one instance (usually `.standard`) can be
/// shared by every device actor. `decode` never fails for an unregistered UUID: it returns
/// `.raw`. For a registered UUID it returns the typed event or throws the decoder's
/// `GATTDecodeError`; it never traps on any input.
///
/// Bytes after the last field the flags announce are ignored, because the specifications let
/// later revisions append fields (Heart Rate Measurement is the exception: with its RR flag set,
/// everything after the fixed fields is RR intervals). Reserved flag bits are ignored likewise.
public struct CharacteristicRegistry: Sendable {
    /// A decoder for one characteristic.
    public typealias Decoder = @Sendable (ArraySlice<UInt8>) throws(GATTDecodeError) -> CharacteristicEvent

    private var decoders: [BluetoothUUID: Decoder]

    /// An empty registry: every characteristic decodes to `.raw`.
    public init() { decoders = [:] }

    /// Returns a copy with `decoder` registered for `uuid` (replacing any previous one).
    public func registering(_ uuid: BluetoothUUID, _ decoder: @escaping Decoder) -> CharacteristicRegistry {
        var copy = self
        copy.decoders[uuid] = decoder
        return copy
    }

    /// Every UUID with a decoder, in UUID order.
    public var registeredUUIDs: [BluetoothUUID] { decoders.keys.sorted() }

    public func decoder(for uuid: BluetoothUUID) -> Decoder? { decoders[uuid] }

    /// Decodes `bytes` as the characteristic `uuid`; `.raw` when no decoder is registered.
    public func decode(_ bytes: ArraySlice<UInt8>, from uuid: BluetoothUUID) throws(GATTDecodeError) -> CharacteristicEvent {
        guard let decoder = decoders[uuid] else {
            return .raw(RawCharacteristicValue(uuid: uuid, bytes: Array(bytes)))
        }
        return try decoder(bytes)
    }

    /// Decodes `bytes` as the characteristic `uuid`; `.raw` when no decoder is registered.
    public func decode(_ bytes: [UInt8], from uuid: BluetoothUUID) throws(GATTDecodeError) -> CharacteristicEvent {
        try decode(bytes[...], from: uuid)
    }

    /// Every characteristic this module decodes.
    public static let standard: CharacteristicRegistry = {
        var registry = CharacteristicRegistry()
            .registering(.heartRateMeasurement) { bytes throws(GATTDecodeError) in
                .heartRateMeasurement(try HeartRateMeasurement.decode(bytes))
            }
            .registering(.bodySensorLocation) { bytes throws(GATTDecodeError) in
                .bodySensorLocation(try BodySensorLocation.decode(bytes))
            }
            .registering(.batteryLevel) { bytes throws(GATTDecodeError) in
                .batteryLevel(try BatteryLevel.decode(bytes))
            }
            .registering(.systemID) { bytes throws(GATTDecodeError) in .systemID(try SystemID.decode(bytes)) }
            .registering(.pnpID) { bytes throws(GATTDecodeError) in .pnpID(try PnPID.decode(bytes)) }
            .registering(.temperatureMeasurement) { bytes throws(GATTDecodeError) in
                .temperatureMeasurement(try TemperatureMeasurement.decode(bytes))
            }
            .registering(.intermediateTemperature) { bytes throws(GATTDecodeError) in
                .intermediateTemperature(try TemperatureMeasurement.decode(bytes))
            }
            .registering(.plxSpotCheckMeasurement) { bytes throws(GATTDecodeError) in
                .plxSpotCheckMeasurement(try PLXSpotCheckMeasurement.decode(bytes))
            }
            .registering(.plxContinuousMeasurement) { bytes throws(GATTDecodeError) in
                .plxContinuousMeasurement(try PLXContinuousMeasurement.decode(bytes))
            }
            .registering(.bloodPressureMeasurement) { bytes throws(GATTDecodeError) in
                .bloodPressureMeasurement(try BloodPressureMeasurement.decode(bytes))
            }
            .registering(.rscMeasurement) { bytes throws(GATTDecodeError) in
                .rscMeasurement(try RSCMeasurement.decode(bytes))
            }
            .registering(.cscMeasurement) { bytes throws(GATTDecodeError) in
                .cscMeasurement(try CSCMeasurement.decode(bytes))
            }
            .registering(.weightMeasurement) { bytes throws(GATTDecodeError) in
                .weightMeasurement(try WeightMeasurement.decode(bytes))
            }
            .registering(.currentTime) { bytes throws(GATTDecodeError) in
                .currentTime(try CurrentTime.decode(bytes))
            }
            .registering(.dateTime) { bytes throws(GATTDecodeError) in .dateTime(try DateTime.decode(bytes)) }
        for field in DeviceInformationString.Field.allCases {
            registry = registry.registering(field.uuid) { bytes throws(GATTDecodeError) in
                .deviceInformation(try DeviceInformationString.decode(bytes, field: field))
            }
        }
        return registry
    }()
}
