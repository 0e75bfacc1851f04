import FleetConfiguration
import FleetCore
import Glibc
import Logging

/// `[pairing] passkeys_file` on disk: resolved like every credential (an absolute path, or a
/// name in `$CREDENTIALS_DIRECTORY`: `LoadCredential=`), read again for every passkey bluetoothd
/// asks for, so a changed file is used without a reload. Problems are logged with their
/// `file:line`, never with a passkey.
public struct PairingPasskeysFile: Sendable {
    public let path: String
    let logger: Logger

    /// Nil when `name` is a credential name but no credentials directory is set.
    public init?(_ name: String, environment: [String: String], logger: Logger) {
        if name.hasPrefix("/") {
            path = name
        } else if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            path = directory + "/" + name
        } else {
            return nil
        }
        self.logger = logger
    }

    /// The passkeys the file holds now (none when it cannot be read), its problems logged.
    public func read() -> PairingPasskeys {
        guard let text = Self.contents(of: path) else {
            logger.error("pairing: cannot read the passkeys file \(path)", metadata: ["event": "pairing_passkeys_unreadable"])
            return PairingPasskeys()
        }
        let (passkeys, problems) = PairingPasskeys.parse(text, file: path)
        for problem in problems { logger.warning("pairing: \(problem)", metadata: ["event": "pairing_passkeys_problem"]) }
        return passkeys
    }

    /// The file's first 64 KiB as text; nil when it cannot be opened or read.
    static func contents(of path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var filled = 0
        while filled < buffer.count {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 { return nil }
            if count == 0 { break }
            filled += count
        }
        return String(decoding: buffer.prefix(filled), as: UTF8.self)
    }
}
