import Logging

extension Logger.Level {
    /// The syslog priority journald stores in `PRIORITY` (0 emerg … 7 debug). swift-log has no
    /// emergency or alert level; `trace` shares `debug`'s 7, since syslog has nothing finer.
    public var syslogPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
