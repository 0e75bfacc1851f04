import DBus
import FleetControl
import FleetCore

/// `org.wearfleet.Daemon1`: what the daemon exports at `/org/wearfleet/Daemon` for
/// `wearfleetctl` and other programs. Reading (below) is for root and group `wearfleet` (the bus
/// policy); the commands that change the fleet (one method per declaration of `CommandCatalogue`:
/// `ControlInterface+Commands.swift`) are for root and group `wearfleet-admin`, checked by the bus
/// policy and again by the daemon (`ControlAccess`).
///
/// - `WatchValues(a{sv} filter) → (h, u)` and the `DeviceStateChanged` signal: live values and
///   state changes (ControlInterface+Watch), when the endpoint was given the fleet.
/// - `GetStatus() → a{sv}`: version, bluetoothd presence, pinned ready/total, pool connected,
///   device count, the summary line and the adapters (`aa{sv}`).
/// - `ListDevices() → aa{sv}`: every device, ordered by address.
/// - `GetDevice(s address) → a{sv}`: one device; `org.wearfleet.Error.InvalidAddress` for text
///   that is not `AA:BB:CC:DD:EE:FF`, `org.wearfleet.Error.UnknownDevice` for an address the
///   fleet does not manage.
/// - Properties `Version` (s, constant) and `Summary` (s, announced with `PropertiesChanged`).
///
/// Every answer is computed from a fresh `FleetStatus` taken from `status`, so the interface can
/// be tested with any status and no BlueZ at all.
public enum ControlInterface {
    /// Takes a snapshot of the fleet (the daemon passes `orchestrator.status()`).
    public typealias StatusProvider = @Sendable () async -> FleetStatus

    static let versionProperty = "Version"
    static let summaryProperty = "Summary"

    /// The interface, its methods answering from `status`. `observed` sees every snapshot a
    /// call took (the endpoint keeps `Summary` fresh with it).
    /// `watch`, when given, adds `WatchValues` and `DeviceStateChanged` (ControlInterface+Watch).
    public static func definition(
        version: String, status: @escaping StatusProvider, observed: (@Sendable (FleetStatus) async -> Void)? = nil,
        commands: Commands? = nil, watch: WatchHub? = nil
    ) -> DBusInterface {
        let snapshot: StatusProvider = {
            let current = await status()
            await observed?(current)
            return current
        }
        var interface = DBusInterface(
            WearfleetControl.interfaceName,
            methods: [
                DBusMethod("GetStatus", outputs: [DBusArgument("status", .dictionary(key: .string, value: .variant))],
                    handler: .async { _ in
                        [.stringVariantMap(await snapshot().controlStatus(version: version).properties)]
                    }),
                DBusMethod("ListDevices", outputs: [DBusArgument("devices", .array(.dictionary(key: .string, value: .variant)))],
                    handler: .async { _ in
                        [deviceList(await snapshot().controlDevices)]
                    }),
                DBusMethod(
                    "GetDevice", inputs: [DBusArgument("address", .string)],
                    outputs: [DBusArgument("device", .dictionary(key: .string, value: .variant))],
                    handler: .async { call in
                        let text = try call.body.decode(String.self, at: 0)
                        return [.stringVariantMap(try device(text, in: await snapshot()).properties)]
                    }),
            ] + (commands.map { commandMethods($0, status: status) } ?? []),
            properties: [
                DBusProperty(versionProperty, .string, emitsChange: false),
                DBusProperty(summaryProperty, .string),
            ])
        if let watch {
            interface.methods.append(watchMethod(hub: watch))
            interface.signals.append(deviceStateChanged)
        }
        return interface
    }

    /// The properties' values for `export`.
    static func properties(version: String, summary: String) -> [String: DBusValue] {
        [versionProperty: .string(version), summaryProperty: .string(summary)]
    }

    static func deviceList(_ devices: [ControlDevice]) -> DBusValue {
        .array(element: .dictionary(key: .string, value: .variant), devices.map { .stringVariantMap($0.properties) })
    }

    /// `GetDevice`'s lookup, with the interface's two errors.
    static func device(_ text: String, in status: FleetStatus) throws -> ControlDevice {
        guard let address = BluetoothAddress(text) else {
            throw DBusError(
                name: WearfleetControl.ErrorName.invalidAddress,
                message: "'\(text.prefix(64))' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        guard let device = status.device(address: address) else {
            throw DBusError(name: WearfleetControl.ErrorName.unknownDevice, message: "\(address) is not in the fleet")
        }
        return device.controlDevice(now: status.capturedAt)
    }
}
