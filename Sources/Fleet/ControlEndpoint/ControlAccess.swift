import DBus
import FleetControl
#if canImport(Glibc)
import Glibc
#endif

/// Who called a method: the caller's uid and groups as the bus daemon saw them.
public struct CallerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var uid: UInt32
    public var groups: Set<UInt32>

    public init(uid: UInt32, groups: Set<UInt32>) {
        self.uid = uid
        self.groups = groups
    }

    public var description: String { "uid \(uid)" }
}

/// The daemon's own check of who may change the fleet, the second of the two gates (the first
/// is the installed bus policy, `org.wearfleet.Daemon.conf`, per method): commands are for root
/// and the members of the admin group (`wearfleet-admin`) only. Reading needs no check here:
/// the bus policy already limits it to root and group `wearfleet`.
///
/// Nothing is cached: the caller's credentials are asked of the bus for each command, and the
/// admin group is looked up each time, so a user removed from the group loses the right at their
/// next command (commands are rare; the lookups cost one bus round trip and microseconds).
public struct ControlAccess: Sendable {
    /// The caller's credentials, by the sender's unique bus name.
    public typealias CredentialsLookup = @Sendable (_ sender: String) async throws -> CallerCredentials

    /// The admin group's name, as sysusers creates it.
    public let adminGroupName: String
    /// The admin group's gid, looked up when asked (nil: no such group, so only root may command).
    let adminGroup: @Sendable () -> UInt32?
    let credentials: CredentialsLookup

    /// Credentials from `lookup`, and the admin group's gid from `adminGroup` (tests inject both).
    public init(adminGroupName: String = WearfleetControl.adminGroup, adminGroup: @escaping @Sendable () -> UInt32?, credentials: @escaping CredentialsLookup) {
        self.adminGroupName = adminGroupName
        self.adminGroup = adminGroup
        self.credentials = credentials
    }

    /// The daemon's: the sender's uid and groups from the bus daemon (`GetConnectionCredentials`:
    /// `UnixUserID`, and `UnixGroupIDs`, the groups the caller's process has, which are what
    /// dbus-daemon's own `group=` rules match); where the bus reports no groups, those of the uid
    /// in the group database (`getgrouplist`). The admin group's gid from the group database.
    public static func system(on connection: DBusConnection, adminGroupName: String = WearfleetControl.adminGroup) -> ControlAccess {
        ControlAccess(
            adminGroupName: adminGroupName, adminGroup: { groupID(named: adminGroupName) },
            credentials: { sender in
                let reply = try await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "GetConnectionCredentials", [.string(sender)], timeout: .seconds(5))
                let credentials = try reply.decode([String: DBusValue].self, at: 0)
                return try callerCredentials(from: credentials)
            })
    }

    /// The caller's uid and groups from `GetConnectionCredentials`' answer.
    public static func callerCredentials(from credentials: [String: DBusValue]) throws -> CallerCredentials {
        guard case .uint32(let uid)? = credentials["UnixUserID"]?.unwrappingVariant else {
            throw DBusError(name: DBusError.failed, message: "the bus did not tell the caller's uid")
        }
        if case .array(_, let values)? = credentials["UnixGroupIDs"]?.unwrappingVariant {
            var groups: Set<UInt32> = []
            for value in values {
                guard case .uint32(let gid) = value else {
                    throw DBusError(name: DBusError.failed, message: "the bus told the caller's groups in an unknown form")
                }
                groups.insert(gid)
            }
            return CallerCredentials(uid: uid, groups: groups)
        }
        return CallerCredentials(uid: uid, groups: groups(ofUser: uid))
    }

    /// Whether `caller` may change the fleet: root, or a member of the admin group.
    public static func mayCommand(_ caller: CallerCredentials, adminGroup: UInt32?) -> Bool {
        if caller.uid == 0 { return true }
        guard let adminGroup else { return false }
        return caller.groups.contains(adminGroup)
    }

    /// Throws `org.freedesktop.DBus.Error.AccessDenied` unless the caller behind `sender` may
    /// run `method`. A caller whose credentials cannot be had is denied.
    func authorizeCommand(_ method: String, sender: String) async throws {
        let caller: CallerCredentials
        do {
            caller = try await credentials(sender)
        } catch {
            throw DBusError(name: DBusError.accessDenied, message: "\(method): cannot tell who the caller is (\(error)); denied")
        }
        guard Self.mayCommand(caller, adminGroup: adminGroup()) else {
            throw DBusError(
                name: DBusError.accessDenied,
                message: "\(method) changes the fleet: only root and members of group \(adminGroupName) may call it (caller is \(caller))")
        }
    }

    // MARK: - The system's databases

    /// The gid of group `name`, or nil when there is none.
    public static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return group.gr_gid
    }

    /// The groups of `uid` (its primary group and every group listing its user name), or none
    /// when the uid has no user entry.
    public static func groups(ofUser uid: UInt32) -> Set<UInt32> {
        var user = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &user, &buffer, buffer.count, &result) == 0, result != nil, let name = user.pw_name else { return [] }
        let primary = user.pw_gid
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let capacity = count
            if getgrouplist(name, primary, &groups, &count) >= 0 {
                return Set(groups.prefix(Int(count)))
            }
            // -1: the list did not fit; `count` now holds the size it needs.
            guard count > capacity, count < 65_536 else { return [primary] }
        }
    }
}
