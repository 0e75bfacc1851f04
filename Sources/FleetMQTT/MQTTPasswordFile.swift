import Glibc

/// The broker's password, read from its file: at setup (an unreadable file is a setup error)
/// and again before each connection attempt (a rotated password is picked up without a reload).
struct MQTTPasswordFile: Sendable, Equatable {
    /// The file's first 4 KiB, trailing newlines removed.
    var password: String
    /// The file's mode lets its group or others read it (`fstat` on the descriptor read).
    var readableByOthers: Bool

    /// Nil when the file cannot be opened or read.
    static func read(_ path: String) -> MQTTPasswordFile? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        let loose = fstat(fd, &status) == 0 && status.st_mode & (S_IRGRP | S_IROTH) != 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count >= 0 else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        return MQTTPasswordFile(
            password: String(text.reversed().drop(while: { $0 == "\n" || $0 == "\r" }).reversed()), readableByOthers: loose)
    }
}
