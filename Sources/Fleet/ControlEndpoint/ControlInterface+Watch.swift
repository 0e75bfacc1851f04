import DBus
import FleetControl
import FleetCore
import Glibc

// The live half of `org.wearfleet.Daemon1`: values out through a socket per client, state
// changes as signals. Kept apart from the read-only methods so that each half reads on its own.

extension ControlInterface {
    static let watchValuesMethod = "WatchValues"
    static let deviceStateChangedSignal = "DeviceStateChanged"

    /// `WatchValues(a{sv} filter) → (h socket, u max_record_bytes)`: a SOCK_SEQPACKET socket
    /// carrying one JSON record per datagram (README, "Value JSON" and "Watching values") for
    /// the devices and characteristics `filter` names (`WatchFilter`); closing it ends the
    /// watch. `org.wearfleet.Error.InvalidFilter` for a filter it cannot use,
    /// `org.wearfleet.Error.TooManyWatchers` while `WatchHub.clientLimit` clients watch.
    static func watchMethod(hub: WatchHub) -> DBusMethod {
        DBusMethod(
            watchValuesMethod, inputs: [DBusArgument("filter", .dictionary(key: .string, value: .variant))],
            outputs: [DBusArgument("socket", .unixFD), DBusArgument("max_record_bytes", .uint32)],
            handler: .sync { call in
                let filter = try WatchFilter(properties: try call.body.decode([String: DBusValue].self, at: 0))
                let socket: Int32
                do {
                    socket = try hub.addClient(filter).socket
                } catch WatchHubError.tooManyClients(let limit) {
                    throw DBusError(
                        name: WearfleetControl.ErrorName.tooManyWatchers,
                        message: "\(limit) clients watch already, the most at once; close one and try again")
                } catch {
                    throw DBusError(name: DBusError.failed, message: "cannot open a watch socket: \(error)")
                }
                // The reply duplicates it for the caller; this copy is closed when the reply is built.
                return [.unixFD(DBusFileDescriptor(owning: socket)), .uint32(UInt32(WatchHub.maximumRecordBytes))]
            })
    }

    /// `DeviceStateChanged(s address, s address_type, s state, s previous, s reason, s adapter,
    /// s session)`: every device state change; `reason` and `adapter` are empty when there is
    /// none; `session` is the journal's `SESSION_ID` (`<run>-<session>`).
    static let deviceStateChanged = DBusSignal(
        deviceStateChangedSignal,
        arguments: [
            DBusArgument("address", .string), DBusArgument("address_type", .string), DBusArgument("state", .string),
            DBusArgument("previous", .string), DBusArgument("reason", .string), DBusArgument("adapter", .string),
            DBusArgument("session", .string),
        ])

    static func deviceStateChangedBody(_ record: LiveStateRecord) -> [DBusValue] {
        [
            .string(record.device.address.description), .string(record.device.addressType.rawValue),
            .string(record.state.name), .string(record.previous.name), .string(record.reason ?? ""),
            .string(record.adapter?.name ?? ""), .string(record.session),
        ]
    }
}
