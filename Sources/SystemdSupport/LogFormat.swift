import Glibc

/// The daemon's log output format (`--log-format journal|console|json`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// Native journald entries with structured fields.
    case journal
    /// One human-readable line per event on standard error.
    case console
    /// One JSON object per line on standard error.
    case json

    /// The identity (`st_dev`, `st_ino`) of an open file, as `JOURNAL_STREAM` spells it.
    public struct FileIdentity: Hashable, Sendable {
        public var device: UInt64
        public var inode: UInt64

        public init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        /// The identity of an open descriptor, or nil if it is not open.
        public static func of(descriptor: Int32) -> FileIdentity? {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return nil }
            return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
    }

    /// `journal` when standard error is the journal stream systemd connected us to, else `console`.
    ///
    /// systemd sets `JOURNAL_STREAM=<dev>:<inode>` for services whose output goes to the journal;
    /// as `systemd.exec(5)` documents, the variable alone is not enough (a child process inherits it
    /// even when its stderr was redirected), so it must match stderr's own `st_dev:st_ino`.
    public static func detect(
        environment: [String: String],
        standardError: FileIdentity? = FileIdentity.of(descriptor: 2)
    ) -> LogFormat {
        guard let stream = environment["JOURNAL_STREAM"], let standardError else { return .console }
        let parts = stream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return .console }
        return FileIdentity(device: device, inode: inode) == standardError ? .journal : .console
    }
}
