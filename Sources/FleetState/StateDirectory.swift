/// Where the daemon keeps its state: `--state-dir`, else systemd's `$STATE_DIRECTORY`
/// (`StateDirectory=wearfleet`), else `/var/lib/wearfleet`.
public enum StateDirectory {
    public static let defaultPath = "/var/lib/wearfleet"

    /// systemd passes one path per `StateDirectory=` entry, colon-separated; the first is ours.
    /// Empty values count as absent.
    public static func resolve(argument: String?, environment: [String: String]) -> String {
        if let argument, !argument.isEmpty { return argument }
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first(where: { !$0.isEmpty }) {
            return String(fromSystemd)
        }
        return defaultPath
    }
}
