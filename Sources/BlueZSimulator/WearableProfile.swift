import BluetoothVocabulary
import Foundation
import GATT

/// The GATT database of each kind of wearable, built from the standard characteristics' encoders.
enum WearableProfile {
    static func services(for device: WearableConfiguration, timings: SimulatorTimings) -> [GATTServiceLayout] {
        var services: [GATTServiceLayout] = []
        switch device.kind {
        case .heartRateStrap:
            services.append(heartRate(timings: timings, bodyLocation: 1))
        case .watch:
            services.append(heartRate(timings: timings, bodyLocation: 2))
            services.append(
                GATTServiceLayout(
                    uuid: .healthThermometerService,
                    characteristics: [
                        GATTCharacteristicLayout(
                            uuid: .temperatureMeasurement, flags: [.indicate], initialValue: [],
                            notifyInterval: timings.slowMeasurementInterval * 5)
                    ]))
            services.append(
                GATTServiceLayout(
                    uuid: .pulseOximeterService,
                    characteristics: [
                        GATTCharacteristicLayout(
                            uuid: .plxContinuousMeasurement, flags: [.notify], initialValue: [],
                            notifyInterval: timings.slowMeasurementInterval)
                    ]))
        case .motionBand:
            services.append(
                GATTServiceLayout(
                    uuid: .motionBandService,
                    characteristics: [
                        GATTCharacteristicLayout(
                            uuid: .motionBandData, flags: [.notify], initialValue: [],
                            notifyInterval: 1 / device.notifyHz, realTimeRate: true),
                        GATTCharacteristicLayout(
                            uuid: .motionBandControl, flags: [.writeWithoutResponse, .write, .notify], initialValue: [],
                            notifyInterval: nil),
                    ]))
        case .bloodPressureCuff:
            services.append(
                GATTServiceLayout(
                    uuid: .bloodPressureService,
                    characteristics: [
                        GATTCharacteristicLayout(
                            uuid: .bloodPressureMeasurement, flags: [.indicate], initialValue: [],
                            encryptedSubscribe: device.requiresEncryption),
                        // Body movement detection and irregular pulse detection supported.
                        GATTCharacteristicLayout(uuid: .bloodPressureFeatureCharacteristic, flags: [.read], initialValue: [0x05, 0x00]),
                    ]))
            services.append(currentTime(device))
        case .weightScale:
            services.append(
                GATTServiceLayout(
                    uuid: .weightScaleService,
                    characteristics: [
                        GATTCharacteristicLayout(
                            uuid: .weightMeasurement, flags: [.indicate], initialValue: [],
                            encryptedSubscribe: device.requiresEncryption),
                        // Time stamp supported; weight resolution 0.005 kg (7 in bits 3–6).
                        GATTCharacteristicLayout(uuid: .weightScaleFeatureCharacteristic, flags: [.read], initialValue: [0x39, 0x00, 0x00, 0x00]),
                    ]))
            services.append(currentTime(device))
        }
        services.append(
            GATTServiceLayout(
                uuid: .batteryService,
                characteristics: [
                    GATTCharacteristicLayout(
                        uuid: .batteryLevel, flags: [.read, .notify], initialValue: BatteryLevel(percent: 87)?.encode() ?? [87],
                        notifyInterval: timings.slowMeasurementInterval * 30)
                ]))
        services.append(deviceInformation(device))
        return services
    }

    private static func heartRate(timings: SimulatorTimings, bodyLocation: UInt8) -> GATTServiceLayout {
        GATTServiceLayout(
            uuid: .heartRateService,
            characteristics: [
                GATTCharacteristicLayout(
                    uuid: .heartRateMeasurement, flags: [.notify], initialValue: [], notifyInterval: timings.heartRateInterval),
                GATTCharacteristicLayout(uuid: .bodySensorLocation, flags: [.read], initialValue: [bodyLocation]),
            ])
    }

    /// The Current Time service: read (the device's clock), write (sets it; encrypted link wanted
    /// when the device wants one), notify (changes of the clock; never sent by the simulator).
    private static func currentTime(_ device: WearableConfiguration) -> GATTServiceLayout {
        GATTServiceLayout(
            uuid: .currentTimeService,
            characteristics: [
                GATTCharacteristicLayout(
                    uuid: .currentTime, flags: [.read, .write, .notify],
                    initialValue: DeviceClock.powerOnTime.currentTime(adjustReason: []).encode(),
                    encryptedWrite: device.requiresEncryption)
            ])
    }

    private static func deviceInformation(_ device: WearableConfiguration) -> GATTServiceLayout {
        let model: String
        switch device.kind {
        case .heartRateStrap: model = "HRS-200"
        case .watch: model = "WW-5"
        case .motionBand: model = "MB-1"
        case .bloodPressureCuff: model = "BPC-3"
        case .weightScale: model = "WS-2"
        }
        let strings: [(DeviceInformationString.Field, String)] = [
            (.manufacturerName, "Wearfleet Labs"), (.modelNumber, model),
            (.serialNumber, device.address.replacingOccurrences(of: ":", with: "")), (.firmwareRevision, "2.4.1"),
        ]
        return GATTServiceLayout(
            uuid: .deviceInformationService,
            characteristics: strings.map { field, value in
                GATTCharacteristicLayout(
                    uuid: field.uuid, flags: [.read], initialValue: DeviceInformationString(field: field, value: value).encode())
            })
    }
}
