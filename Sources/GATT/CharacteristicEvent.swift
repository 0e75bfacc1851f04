// The one type the runtime receives from decoding, whatever the characteristic: it is what the
// device actor publishes, what journald fields and JSON are rendered from.

/// A decoded characteristic value, tagged with what it is.
///
/// Produced by `CharacteristicRegistry`; an unknown characteristic becomes `.raw`, not an error.
///
/// ## Key/value rendering
///
/// `keyValuePairs` is an ordered list of (snake_case key, text value) pairs, stable across
/// releases: it is the journald field set (upper-cased by the log handler) and the JSON object
/// of an event. Optional fields absent from the payload are omitted. Numbers are exact decimals
/// (IEEE 11073 values print their mantissa and exponent exactly, e.g. `36.5`); their special
/// values print as `nan`, `nres`, `+inf`, `-inf`, `reserved`. Timestamps are
/// `YYYY-MM-DDTHH:MM:SS` (device local time, no zone). Status bit sets print as
/// comma-separated names of the set bits (reserved bits as `bit_N`).
///
/// | event (`name`) | keys, in order |
/// |---|---|
/// | `heart_rate_measurement` | `heart_rate_bpm`, `rr_intervals_ms`? (comma-separated, 1 decimal), `sensor_contact` (`not_supported`/`not_detected`/`detected`), `energy_expended_kj`? |
/// | `body_sensor_location` | `body_sensor_location` (`other`, `chest`, `wrist`, `finger`, `hand`, `ear_lobe`, `foot`, `reserved_N`) |
/// | `battery_level` | `battery_level_percent` |
/// | `device_information` | one of `model_number`, `serial_number`, `firmware_revision`, `hardware_revision`, `software_revision`, `manufacturer_name` |
/// | `system_id` | `manufacturer_identifier` (10 hex digits), `organizationally_unique_identifier` (6 hex digits) |
/// | `pnp_id` | `vendor_id_source` (`bluetooth_sig`/`usb_if`/`reserved_N`), `vendor_id` (`0x….`), `product_id` (`0x….`), `product_version` (`major.minor.sub`) |
/// | `temperature_measurement`, `intermediate_temperature` | `temperature`, `temperature_unit` (`celsius`/`fahrenheit`), `timestamp`?, `temperature_type`? |
/// | `plx_spot_check_measurement` | `spo2_percent`, `pulse_rate_bpm`, `timestamp`?, `measurement_status`?, `device_sensor_status`?, `pulse_amplitude_index_percent`?, `device_clock_not_set`? (`true`) |
/// | `plx_continuous_measurement` | `spo2_percent`, `pulse_rate_bpm`, `spo2_fast_percent`?, `pulse_rate_fast_bpm`?, `spo2_slow_percent`?, `pulse_rate_slow_bpm`?, `measurement_status`?, `device_sensor_status`?, `pulse_amplitude_index_percent`? |
/// | `blood_pressure_measurement` | `systolic`, `diastolic`, `mean_arterial_pressure`, `pressure_unit` (`mmhg`/`kpa`), `timestamp`?, `pulse_rate_bpm`?, `user_id`? (number or `unknown`), `measurement_status`? |
/// | `rsc_measurement` | `speed_m_per_s` (3 decimals), `cadence_steps_per_min`, `stride_length_m`?, `total_distance_m`?, `motion` (`walking`/`running`) |
/// | `csc_measurement` | `cumulative_wheel_revolutions`?, `last_wheel_event_time_s`?, `cumulative_crank_revolutions`?, `last_crank_event_time_s`? (times: 3 decimals) |
/// | `weight_measurement` | `weight` (number or `unsuccessful`), `weight_unit` (`kg`/`lb`), `timestamp`?, `user_id`?, `bmi_kg_per_m2`?, `height`?, `height_unit`? (`m`/`in`) |
/// | `current_time` | `date_time`, `day_of_week` (`unknown`, `monday` … `sunday`), `fractions256`, `adjust_reason`? |
/// | `date_time` | `date_time` |
/// | `raw` | `uuid` (canonical 128-bit), `raw_hex` |
///
/// `?` marks a key present only when the payload carries the field.
/// Example: `[("heart_rate_bpm","72"), ("rr_intervals_ms","812.5,798.8"), ("sensor_contact","detected")]`,
/// summary `72 bpm, RR 812/799 ms`.
public enum CharacteristicEvent: Hashable, Sendable {
    case heartRateMeasurement(HeartRateMeasurement)
    case bodySensorLocation(BodySensorLocation)
    case batteryLevel(BatteryLevel)
    case deviceInformation(DeviceInformationString)
    case systemID(SystemID)
    case pnpID(PnPID)
    case temperatureMeasurement(TemperatureMeasurement)
    case intermediateTemperature(TemperatureMeasurement)
    case plxSpotCheckMeasurement(PLXSpotCheckMeasurement)
    case plxContinuousMeasurement(PLXContinuousMeasurement)
    case bloodPressureMeasurement(BloodPressureMeasurement)
    case rscMeasurement(RSCMeasurement)
    case cscMeasurement(CSCMeasurement)
    case weightMeasurement(WeightMeasurement)
    case currentTime(CurrentTime)
    case dateTime(DateTime)
    case raw(RawCharacteristicValue)

    /// The snake_case event name (first column of the table above), for the `EVENT` field.
    public var name: String {
        switch self {
        case .heartRateMeasurement: "heart_rate_measurement"
        case .bodySensorLocation: "body_sensor_location"
        case .batteryLevel: "battery_level"
        case .deviceInformation: "device_information"
        case .systemID: "system_id"
        case .pnpID: "pnp_id"
        case .temperatureMeasurement: "temperature_measurement"
        case .intermediateTemperature: "intermediate_temperature"
        case .plxSpotCheckMeasurement: "plx_spot_check_measurement"
        case .plxContinuousMeasurement: "plx_continuous_measurement"
        case .bloodPressureMeasurement: "blood_pressure_measurement"
        case .rscMeasurement: "rsc_measurement"
        case .cscMeasurement: "csc_measurement"
        case .weightMeasurement: "weight_measurement"
        case .currentTime: "current_time"
        case .dateTime: "date_time"
        case .raw: "raw"
        }
    }

    /// The decoded value, for rendering.
    public var value: any KeyValueRenderable {
        switch self {
        case .heartRateMeasurement(let value): value
        case .bodySensorLocation(let value): value
        case .batteryLevel(let value): value
        case .deviceInformation(let value): value
        case .systemID(let value): value
        case .pnpID(let value): value
        case .temperatureMeasurement(let value): value
        case .intermediateTemperature(let value): value
        case .plxSpotCheckMeasurement(let value): value
        case .plxContinuousMeasurement(let value): value
        case .bloodPressureMeasurement(let value): value
        case .rscMeasurement(let value): value
        case .cscMeasurement(let value): value
        case .weightMeasurement(let value): value
        case .currentTime(let value): value
        case .dateTime(let value): value
        case .raw(let value): value
        }
    }
}

extension CharacteristicEvent: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { value.keyValuePairs }
    public var summary: String { value.summary }
}
