import Glibc

/// A file of /proc read whole with read(2). Its size says 0, and Foundation's
/// `String(contentsOfFile:)` returns its first page only: with 400 sockets listening, 27 of
/// /proc/net/tcp's 402 lines (4,050 of 60,300 bytes). Two tests looking for their own socket in
/// it missed it in full runs (NOTES.md, "Tests that failed on a busy machine").
public func procFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
}
