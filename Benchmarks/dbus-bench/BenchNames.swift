import DBus

/// The names both sides agree on; they must match the #defines of Benchmarks/c/dbus-floor.c.
enum BenchNames {
    static let service = "org.wearfleet.Bench"
    static let path: DBusObjectPath = "/org/wearfleet/Bench"
    /// The interface of the echo method, and the `interface` argument of the end marker.
    static let interface = "org.wearfleet.Bench1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let properties = "org.freedesktop.DBus.Properties"
    /// How long a role waits without any progress before it gives up (a lost reply or signal).
    static let idleLimit: Duration = .seconds(10)
}
