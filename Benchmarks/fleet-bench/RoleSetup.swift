import Fleet
import SystemdSupport

/// What the in-process roles (`agent`, `writer`) do before their work: load the configuration the
/// driver wrote, as wearfleetd does, and set up logging under wearfleetd's identifier.
enum RoleSetup {
    static func settings(configPath: String) throws -> WearfleetConfiguration {
        let loaded = ConfigurationLoader.load(
            mainFile: configPath, dropInDirectory: ConfigurationLoader.dropInDirectory(forMainFile: configPath))
        switch loaded {
        case .success(let settings):
            LoggingSetup.bootstrap(format: .console, identifier: "wearfleetd", level: settings.daemon.logLevel, environment: [:])
            return settings
        case .failure(let errors):
            throw BenchError("configuration: \(errors.errors.map(\.description).joined(separator: "; "))")
        }
    }
}
