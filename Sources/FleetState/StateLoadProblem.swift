import FoundationEssentials

/// Why `StateStore.load()` started with no devices although a state file existed. In every case
/// the original file was renamed aside (content untouched) and named here, so nothing is lost and
/// an operator can inspect or restore it.
public enum StateLoadProblem: Equatable, Sendable, CustomStringConvertible {
    /// The file could not be parsed as a state file.
    case corrupt(reason: String, setAsideAt: URL)
    /// The file could not be read (permissions, I/O error, a directory in its place).
    case unreadable(reason: String, setAsideAt: URL)
    /// The file was written by a newer daemon.
    case unsupportedVersion(Int, setAsideAt: URL)

    /// Where the original file now is.
    public var setAsideAt: URL {
        switch self {
        case .corrupt(_, let url), .unreadable(_, let url), .unsupportedVersion(_, let url): url
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let reason, let url): "state file was corrupt (\(reason)); kept as \(url.path), starting with no known devices"
        case .unreadable(let reason, let url): "state file was unreadable (\(reason)); kept as \(url.path), starting with no known devices"
        case .unsupportedVersion(let version, let url):
            "state file has format version \(version), newer than this daemon's \(StateFile.currentVersion); kept as \(url.path), starting with no known devices"
        }
    }
}
