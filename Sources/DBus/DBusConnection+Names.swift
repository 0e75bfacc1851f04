/// What the bus answered to `RequestName`.
public enum NameRequestReply: UInt32, Sendable {
    /// This connection now owns the name.
    case primaryOwner = 1
    /// Queued behind the current owner (only without `doNotQueue`).
    case inQueue = 2
    /// Someone else owns the name and this connection was not queued.
    case exists = 3
    /// This connection already owned the name.
    case alreadyOwner = 4
}

/// What the bus answered to `ReleaseName`.
public enum NameReleaseReply: UInt32, Sendable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}

/// Flags of `RequestName`, as the specification numbers them.
public struct NameRequestFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let allowReplacement = NameRequestFlags(rawValue: 1)
    public static let replaceExisting = NameRequestFlags(rawValue: 2)
    public static let doNotQueue = NameRequestFlags(rawValue: 4)
}

extension DBusConnection {
    /// Asks the bus for the well-known `name`. With the default `doNotQueue`, a name that someone
    /// else holds answers `.exists` instead of waiting in line.
    ///
    /// Throws `DBusValidationError` for an invalid or unique name (libdbus would abort on it), and
    /// the bus's `DBusError` when it refuses (e.g. `AccessDenied` from a bus policy).
    @discardableResult
    public func requestName(_ name: String, flags: NameRequestFlags = .doNotQueue) async throws -> NameRequestReply {
        try DBusValidation.checkBusName(name)
        guard Self.isWellKnown(name) else {
            throw DBusError(name: DBusError.invalidArgs, message: "\(name) is not a well-known name")
        }
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string(name), .uint32(flags.rawValue)])
        let code = try reply.decode(UInt32.self, at: 0)
        guard let answer = NameRequestReply(rawValue: code) else {
            throw DBusError(name: DBusError.failed, message: "RequestName answered unknown code \(code)")
        }
        return answer
    }

    /// Gives up the well-known `name`.
    @discardableResult
    public func releaseName(_ name: String) async throws -> NameReleaseReply {
        try DBusValidation.checkBusName(name)
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", [.string(name)])
        let code = try reply.decode(UInt32.self, at: 0)
        guard let answer = NameReleaseReply(rawValue: code) else {
            throw DBusError(name: DBusError.failed, message: "ReleaseName answered unknown code \(code)")
        }
        return answer
    }
}
