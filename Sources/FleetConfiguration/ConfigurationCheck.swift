import TOML

/// `wearfleetd --check-config [--config FILE]`: validates the configuration the daemon would load.
public enum ConfigurationCheck {
    /// `EX_CONFIG` from sysexits.h: the configuration is wrong.
    public static let invalidConfigurationExitCode: Int32 = 78

    /// Loads the configuration and returns what the command prints and its exit status: 0 and
    /// a one-line summary, or 78 and one `file:line: message` line per error.
    ///
    /// `configPath` nil means the default `/etc/wearfleet/wearfleetd.toml`; `dropInDirectory` nil
    /// means the one next to the main file (`wearfleetd.d`). A missing main file is an error:
    /// checking a file that is not there is a mistake worth reporting.
    public static func run(configPath: String? = nil, dropInDirectory: String? = nil) -> (exitCode: Int32, output: String) {
        let mainFile = configPath ?? ConfigurationLoader.defaultMainFile
        let dropIns = dropInDirectory ?? ConfigurationLoader.dropInDirectory(forMainFile: mainFile)
        switch ConfigurationLoader.load(mainFile: mainFile, dropInDirectory: dropIns) {
        case .success(let configuration):
            return (0, summary(of: configuration))
        case .failure(let errors):
            return (invalidConfigurationExitCode, errors.description)
        }
    }

    /// `wearfleetd.toml (+2 drop-ins): OK: 4 pinned devices, 3 classes, pool on, max 8 connections`.
    public static func summary(of configuration: WearfleetConfiguration) -> String {
        let files = configuration.sources.first ?? "defaults"
        let dropIns = configuration.sources.count - 1
        let dropInText = dropIns > 0 ? " (+\(dropIns) drop-in\(dropIns == 1 ? "" : "s"))" : ""
        let pinned = configuration.pinned.count
        let classes = configuration.classes.count
        return "\(files)\(dropInText): OK: \(pinned) pinned device\(pinned == 1 ? "" : "s"), "
            + "\(classes) class\(classes == 1 ? "" : "es"), pool \(configuration.pool.enabled ? "on" : "off"), "
            + "max \(configuration.fleet.maxConnections) connections"
    }
}
