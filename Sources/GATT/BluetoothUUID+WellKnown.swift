// Call sites name services and characteristics, never spell hex: a typo in a constant here is
// caught by the registry tests, a typo at a call site would not be.

extension BluetoothUUID {
    // MARK: - Services

    public static let heartRateService = BluetoothUUID(0x180D)
    public static let batteryService = BluetoothUUID(0x180F)
    public static let deviceInformationService = BluetoothUUID(0x180A)
    public static let healthThermometerService = BluetoothUUID(0x1809)
    public static let pulseOximeterService = BluetoothUUID(0x1822)
    public static let bloodPressureService = BluetoothUUID(0x1810)
    public static let runningSpeedAndCadenceService = BluetoothUUID(0x1814)
    public static let cyclingSpeedAndCadenceService = BluetoothUUID(0x1816)
    public static let weightScaleService = BluetoothUUID(0x181D)
    public static let currentTimeService = BluetoothUUID(0x1805)

    // MARK: - Characteristics

    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    public static let batteryLevel = BluetoothUUID(0x2A19)
    public static let systemID = BluetoothUUID(0x2A23)
    public static let modelNumberString = BluetoothUUID(0x2A24)
    public static let serialNumberString = BluetoothUUID(0x2A25)
    public static let firmwareRevisionString = BluetoothUUID(0x2A26)
    public static let hardwareRevisionString = BluetoothUUID(0x2A27)
    public static let softwareRevisionString = BluetoothUUID(0x2A28)
    public static let manufacturerNameString = BluetoothUUID(0x2A29)
    public static let pnpID = BluetoothUUID(0x2A50)
    public static let temperatureMeasurement = BluetoothUUID(0x2A1C)
    public static let intermediateTemperature = BluetoothUUID(0x2A1E)
    public static let plxSpotCheckMeasurement = BluetoothUUID(0x2A5E)
    public static let plxContinuousMeasurement = BluetoothUUID(0x2A5F)
    public static let bloodPressureMeasurement = BluetoothUUID(0x2A35)
    public static let rscMeasurement = BluetoothUUID(0x2A53)
    public static let cscMeasurement = BluetoothUUID(0x2A5B)
    public static let weightMeasurement = BluetoothUUID(0x2A9D)
    public static let currentTime = BluetoothUUID(0x2A2B)
    public static let dateTime = BluetoothUUID(0x2A08)
}
