import Glibc

extension BusAddress {
    /// The two variables `resolved` reads, from this process's environment.
    public static var processEnvironment: [String: String] {
        var environment: [String: String] = [:]
        for name in ["DBUS_SYSTEM_BUS_ADDRESS", "DBUS_SESSION_BUS_ADDRESS"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }
}
