import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file so that after a crash or power loss it holds either the old or the new content,
/// never a mix or nothing: write `<name>.tmp` in the same directory, `fsync` it, `rename` it over
/// the file, then `fsync` the directory so the rename itself is durable.
///
/// Only one writer per file at a time (the `StateStore` actor): the temporary name is fixed, so a
/// stray temporary left by a crash is simply overwritten by the next write.
public struct AtomicFileWriter: StateFileWriting {
    /// The temporary file that `write(_:to:)` uses for `file`.
    public static func temporaryFile(for file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".tmp")
    }

    private let mode: mode_t
    /// Runs after the temporary file is durable and before the rename: a test stands in for a crash here.
    let beforeRename: (@Sendable () throws(StateStoreError) -> Void)?

    public init(mode: mode_t = 0o640) {
        self.mode = mode
        self.beforeRename = nil
    }

    init(mode: mode_t = 0o640, beforeRename: @escaping @Sendable () throws(StateStoreError) -> Void) {
        self.mode = mode
        self.beforeRename = beforeRename
    }

    public func write(_ data: Data, to file: URL) throws(StateStoreError) {
        let temporary = Self.temporaryFile(for: file)
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .writeFailed(path: temporary.path, step: "open", errno: errno) }
        var closed = false
        defer { if !closed { close(fd) } }
        do {
            try writeAll(data, to: fd, path: temporary.path)
            guard fsync(fd) == 0 else { throw StateStoreError.writeFailed(path: temporary.path, step: "fsync", errno: errno) }
            closed = true
            // close can report a delayed write error (NFS); treat it as a failed save.
            guard close(fd) == 0 else { throw StateStoreError.writeFailed(path: temporary.path, step: "close", errno: errno) }
            try beforeRename?()
            guard rename(temporary.path, file.path) == 0 else {
                throw StateStoreError.writeFailed(path: file.path, step: "rename", errno: errno)
            }
        } catch let error as StateStoreError {
            unlink(temporary.path)
            throw error
        } catch {
            unlink(temporary.path)
            throw .writeFailed(path: temporary.path, step: "write", errno: EIO)
        }
        try Self.syncDirectory(of: file)
    }

    /// Makes renames and unlinks in `file`'s directory durable.
    static func syncDirectory(of file: URL) throws(StateStoreError) {
        let directory = file.deletingLastPathComponent().path
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .writeFailed(path: directory, step: "open directory", errno: errno) }
        defer { close(fd) }
        // Some filesystems cannot fsync a directory (EINVAL); the rename is as durable as they allow.
        guard fsync(fd) == 0 || errno == EINVAL else {
            throw .writeFailed(path: directory, step: "fsync directory", errno: errno)
        }
    }

    private func writeAll(_ data: Data, to fd: Int32, path: String) throws(StateStoreError) {
        let failure: Int32? = data.withUnsafeBytes { raw -> Int32? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw .writeFailed(path: path, step: "write", errno: failure) }
    }
}
