import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#endif

extension StateStore {
    /// What `load()` found.
    public struct LoadResult: Sendable {
        /// The devices now in the store (empty after a problem), sorted by identity.
        public var devices: [KnownDevice]
        /// Set when an existing file could not be used; it has been set aside and logged.
        public var problem: StateLoadProblem?
    }

    /// Reads the state file into the store, replacing what it held.
    ///
    /// Creates the state directory if it is missing. Removes a temporary file left by a save that
    /// was interrupted (the real file is the previous complete save). A file that cannot be used is
    /// renamed aside and reported in `problem`, and the store starts empty: the daemon can run.
    ///
    /// - Throws: `StateStoreError.directoryUnusable` when the directory cannot be created, is not
    ///   a directory, or is not readable and writable; `.cannotSetAside` when a bad file cannot be
    ///   renamed (the store would otherwise overwrite it later).
    public func load() throws(StateStoreError) -> LoadResult {
        try prepareDirectory()
        removeStrayTemporary()

        let result: LoadResult
        switch readFile() {
        case .missing:
            result = LoadResult(devices: [], problem: nil)
        case .failed(let code):
            let aside = try setAside()
            result = LoadResult(devices: [], problem: .unreadable(reason: StateStoreError.text(code), setAsideAt: aside))
        case .read(let data):
            switch Result(catching: { () throws(StateFile.DecodeError) in try StateFile.decode(data) }) {
            case .success(let decoded):
                result = LoadResult(devices: decoded.sorted { $0.id < $1.id }, problem: nil)
            case .failure(.unsupportedVersion(let version)):
                result = LoadResult(devices: [], problem: .unsupportedVersion(version, setAsideAt: try setAside()))
            case .failure(.corrupt(let reason)):
                result = LoadResult(devices: [], problem: .corrupt(reason: reason, setAsideAt: try setAside()))
            }
        }
        replaceAll(with: result.devices)
        if let problem = result.problem {
            logger.error("\(problem)", metadata: ["event": "state_file_set_aside", "path": "\(problem.setAsideAt.path)"])
        } else {
            logger.info("loaded known devices", metadata: ["event": "state_loaded", "count": "\(result.devices.count)"])
        }
        return result
    }

    // MARK: - Steps

    private enum ReadOutcome {
        case missing
        case read(Data)
        case failed(Int32)
    }

    /// `mkdir -p` with mode 0750 for the directories it creates; the error names the errno of
    /// the step that failed.
    private static func makeDirectories(_ path: String) throws(StateStoreError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            guard mkdir(prefix, 0o750) != 0 else { continue }
            let code = errno
            guard code == EEXIST, Self.isDirectory(prefix) else {
                throw .directoryUnusable(path: path, reason: "cannot create \(prefix): \(StateStoreError.text(code))")
            }
        }
    }

    private func prepareDirectory() throws(StateStoreError) {
        let path = directory.path
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            guard code == ENOENT else { throw .directoryUnusable(path: path, reason: StateStoreError.text(code)) }
            try Self.makeDirectories(path)
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .directoryUnusable(path: path, reason: "not a directory") }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            throw .directoryUnusable(path: path, reason: "no read/write access: \(StateStoreError.text(errno))")
        }
    }

    private func removeStrayTemporary() {
        let temporary = AtomicFileWriter.temporaryFile(for: file)
        if unlink(temporary.path) == 0 {
            logger.notice("removed the temporary file of an interrupted save; the last complete save is kept",
                          metadata: ["event": "state_stray_temporary_removed", "path": "\(temporary.path)"])
        }
    }

    private func readFile() -> ReadOutcome {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .failed(errno) }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(errno)  // EISDIR, EIO, …
            }
            if count == 0 { return .read(data) }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Renames the state file to `known-devices.json.corrupt-<UTC timestamp>` (with a counter if
    /// that name is taken) and returns the new name.
    private func setAside() throws(StateStoreError) -> URL {
        guard let candidate = Self.setAside(file, at: now()) else { throw .cannotSetAside(path: file.path, errno: errno) }
        return candidate
    }

    /// Renames `file` to `<name>.corrupt-<UTC timestamp>` in its directory (with a counter if
    /// that name is taken, so an earlier one is never overwritten); nil with `errno` set when it
    /// cannot. The state file and the run-time pins file are set aside alike.
    static func setAside(_ file: URL, at date: Date) -> URL? {
        let directory = file.deletingLastPathComponent()
        let stamp = setAsideStamp(date)
        var candidate = directory.appendingPathComponent("\(file.lastPathComponent).corrupt-\(stamp)")
        var counter = 1
        while FileManager.default.fileExists(atPath: candidate.path) {
            counter += 1
            candidate = directory.appendingPathComponent("\(file.lastPathComponent).corrupt-\(stamp)-\(counter)")
        }
        guard rename(file.path, candidate.path) == 0 else { return nil }
        try? AtomicFileWriter.syncDirectory(of: candidate)
        return candidate
    }

    /// `20261122T195801Z`: sortable, and free of the colons that trip up shells and tools.
    static func setAsideStamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2) + "Z"
    }
}

extension StateStore {
    /// Whether `path` names a directory, following links.
    fileprivate static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
