// The JSON form of a value is the key/value rendering with types: the same keys as the journal
// fields (the table on `CharacteristicEvent`), numbers as numbers, bit sets and RR intervals as
// arrays. One table of keys serves the journal, the watch socket and MQTT.

extension CharacteristicEvent {
    /// The value's kind, a stable snake_case word usable as an MQTT topic segment: `heart_rate`,
    /// `body_sensor_location`, `battery`, `device_information`, `system_id`, `pnp_id`,
    /// `temperature` (measurement and intermediate), `spo2` (spot check and continuous),
    /// `blood_pressure`, `weight`, `rsc`, `csc`, `current_time`, `date_time`, `raw` (a
    /// characteristic without a decoder).
    public var kind: String {
        switch self {
        case .heartRateMeasurement: "heart_rate"
        case .bodySensorLocation: "body_sensor_location"
        case .batteryLevel: "battery"
        case .deviceInformation: "device_information"
        case .systemID: "system_id"
        case .pnpID: "pnp_id"
        case .temperatureMeasurement, .intermediateTemperature: "temperature"
        case .plxSpotCheckMeasurement, .plxContinuousMeasurement: "spo2"
        case .bloodPressureMeasurement: "blood_pressure"
        case .weightMeasurement: "weight"
        case .rscMeasurement: "rsc"
        case .cscMeasurement: "csc"
        case .currentTime: "current_time"
        case .dateTime: "date_time"
        case .raw: "raw"
        }
    }

    /// The decoded value as a JSON object: `name` (the event, as in the table above) followed by
    /// the event's keys in their order. Keys documented as numbers are JSON numbers (or a string
    /// such as `nan` or `unsuccessful` when the device sent no number); `rr_intervals_ms` is an
    /// array of numbers, `measurement_status`, `device_sensor_status` and `adjust_reason` arrays
    /// of names, `device_clock_not_set` a boolean. A temperature also carries
    /// `temperature_celsius` (converted, two decimals, when the device sent Fahrenheit). A raw
    /// value's object holds only its `name`: its bytes are the record's `hex`.
    public var jsonValue: JSONObjectWriter {
        var object = JSONObjectWriter(capacity: 128)
        object.string("name", name)
        if case .raw = self { return object }
        for (key, text) in keyValuePairs {
            switch Self.jsonFieldTypes[key] {
            case .number?: object.number(key, text)
            case .numberList?: object.numbers(key, text.split(separator: ","))
            case .nameList?: object.strings(key, text.split(separator: ","))
            case .boolean?: object.bool(key, text == "true")
            case nil: object.string(key, text)
            }
        }
        switch self {
        case .temperatureMeasurement(let value), .intermediateTemperature(let value):
            object.number("temperature_celsius", value.celsiusText)
        default:
            break
        }
        return object
    }

    private enum JSONFieldType {
        case number, numberList, nameList, boolean
    }

    /// The keys whose text is not a plain string (every other key is one).
    private static let jsonFieldTypes: [String: JSONFieldType] = {
        var types: [String: JSONFieldType] = [:]
        for key in [
            "heart_rate_bpm", "energy_expended_kj", "battery_level_percent", "temperature", "spo2_percent",
            "pulse_rate_bpm", "spo2_fast_percent", "pulse_rate_fast_bpm", "spo2_slow_percent", "pulse_rate_slow_bpm",
            "pulse_amplitude_index_percent", "systolic", "diastolic", "mean_arterial_pressure", "user_id", "weight",
            "bmi_kg_per_m2", "height", "speed_m_per_s", "cadence_steps_per_min", "stride_length_m", "total_distance_m",
            "cumulative_wheel_revolutions", "last_wheel_event_time_s", "cumulative_crank_revolutions",
            "last_crank_event_time_s", "fractions256",
        ] { types[key] = .number }
        types["rr_intervals_ms"] = .numberList
        for key in ["measurement_status", "device_sensor_status", "adjust_reason"] { types[key] = .nameList }
        types["device_clock_not_set"] = .boolean
        return types
    }()
}

extension TemperatureMeasurement {
    /// The temperature in °C: exactly as sent when the device sent Celsius; converted and rounded
    /// half-to-even to two decimals when it sent Fahrenheit; the special value's name (`nan`, …)
    /// when it sent no number, or `out_of_range` when the conversion does not fit.
    var celsiusText: String {
        guard case .value(let mantissa, let exponent) = temperature else { return temperature.description }
        if unit == .celsius { return temperature.description }
        // °C = (°F − 32) × 5/9, in integers: °F = mantissa × 10^exponent.
        guard (-9...9).contains(exponent) else { return "out_of_range" }
        var power: Int64 = 1
        for _ in 0..<Int(exponent.magnitude) { power *= 10 }
        let (numerator, denominator) = exponent >= 0
            ? ((Int64(mantissa) * power - 32) * 5, Int64(9))
            : ((Int64(mantissa) - 32 * power) * 5, 9 * power)
        return DecimalText.trimmingZeros(DecimalText.ratio(numerator, over: denominator, fractionDigits: 2))
    }
}
