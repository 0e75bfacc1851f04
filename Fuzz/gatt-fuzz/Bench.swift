// `gatt-fuzz --bench [N]`: decode throughput through the registry, the path the daemon takes for
// every notification. Meaningful in release builds only; debug figures are for comparison.
#if !GATT_FUZZING
import GATT

enum Bench {
    static let samples: [(label: String, uuid: BluetoothUUID, bytes: [UInt8])] = [
        ("heart rate, 8-bit", .heartRateMeasurement, [0x06, 0x48]),
        ("heart rate, energy + 4 RR", .heartRateMeasurement, [0x1E, 0x48, 0x10, 0x27, 0x40, 0x03, 0x32, 0x03, 0x40, 0x03, 0x32, 0x03]),
        ("battery level", .batteryLevel, [0x55]),
        ("temperature, all fields", .temperatureMeasurement, [0x06, 0x6D, 0x01, 0x00, 0xFF, 0xE8, 0x07, 0x03, 0x05, 0x0E, 0x07, 0x09, 0x06]),
        ("PLX continuous, all fields", .plxContinuousMeasurement,
         [0x1F, 0x62, 0x00, 0x48, 0x00, 0x61, 0x00, 0x49, 0x00, 0x63, 0x00, 0x47, 0x00, 0x60, 0x00, 0x10, 0x08, 0x00, 0x23, 0xF0]),
        ("blood pressure, all fields", .bloodPressureMeasurement,
         [0x1E, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00, 0xE8, 0x07, 0x03, 0x05, 0x0E, 0x07, 0x09, 0x44, 0x00, 0x03, 0x0D, 0x00]),
        ("truncated heart rate (error path)", .heartRateMeasurement, [0x01, 0x48]),
    ]

    static func run(iterations: Int) {
        let clock = ContinuousClock()
        let registry = CharacteristicRegistry.standard
        for sample in samples {
            var checksum = 0
            let elapsed = clock.measure {
                for _ in 0..<iterations {
                    switch Result(catching: { () throws(GATTDecodeError) in try registry.decode(sample.bytes, from: sample.uuid) }) {
                    case .success(let event): checksum &+= event.name.utf8.count
                    case .failure(let error): checksum &+= error.offset
                    }
                }
            }
            let (seconds, attoseconds) = elapsed.components
            let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
            let perDecode = nanoseconds / Double(iterations)
            print("\(sample.label): \(Int(perDecode.rounded())) ns/decode, \(Int((1e9 / perDecode).rounded())) decodes/s (checksum \(checksum))")
        }
    }
}
#endif
