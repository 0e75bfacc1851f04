import Glibc

/// Lines for standard error before logging is set up (bad configuration, a failed start): what
/// `systemctl status` and the journal show when the daemon could not run.
enum StandardError {
    /// Writes `line` and a newline, all of it (retrying short writes and EINTR).
    static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
