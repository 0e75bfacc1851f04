import DBus
import FleetControl
import Logging

/// The daemon's control interface on the bus: its own `DBusConnection` (thread
/// "dbus-control"), so control calls never queue behind BlueZ traffic; the
/// `org.wearfleet.Daemon1` object; the well-known name `org.wearfleet.Daemon`; and a refresh
/// that keeps the `Summary` property current (changes are announced within `refreshInterval`).
///
/// The control interface is optional for the daemon: when the name cannot be had (policy,
/// another owner), `startOrLog` logs why and the fleet runs on without it.
public actor ControlEndpoint {
    public nonisolated let connection: DBusConnection
    private let version: String
    private var refresher: Task<Void, Never>?
    private var stopping = false
    /// Live values and state changes (`WatchValues`, `DeviceStateChanged`), when given the fleet.
    public private(set) var live: LiveOutlet?

    private init(connection: DBusConnection, version: String) {
        self.connection = connection
        self.version = version
    }

    /// Connects to `bus`, exports the interface, then asks for the name (exporting first, so the
    /// first caller to see the name finds the object). Throws `ControlEndpointError`; nothing
    /// is left on the bus when it throws.
    ///
    /// - Parameters:
    ///   - commands: the fleet the command methods (`Pin`, `Write`, …) act on; nil exports the
    ///     reading methods only.
    ///   - access: who may command; nil is the system's (`ControlAccess.system`: the caller's
    ///     uid from the bus, root or group `wearfleet-admin`).
    public static func start(
        bus: BusAddress, environment: [String: String]? = nil, version: String = WearfleetVersion.current,
        refreshInterval: Duration = .seconds(2), logger: Logger, status: @escaping ControlInterface.StatusProvider,
        summary: (@Sendable () async -> String)? = nil, commands: (any FleetCommands)? = nil, access: ControlAccess? = nil,
        fleet: FleetOrchestrator? = nil
    ) async throws -> ControlEndpoint {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: bus, threadName: "dbus-control", environment: environment)
        } catch let error as DBusError {
            throw ControlEndpointError.cannotConnect(bus: bus.description, error)
        } catch {
            throw ControlEndpointError.failed(error)
        }
        let endpoint = ControlEndpoint(connection: connection, version: version)
        do {
            let commandSet = commands.map {
                ControlInterface.Commands(fleet: $0, access: access ?? .system(on: connection))
            }
            if let fleet { try await endpoint.startLive(fleet: fleet, logger: logger) }
            try await endpoint.export(status: status, commands: commandSet)
            try await endpoint.claimName()
        } catch {
            await endpoint.live?.stop()
            await connection.close()
            throw error
        }
        // The refresh only needs the one-line summary: a cheap provider keeps an idle daemon idle.
        await endpoint.startRefreshing(every: refreshInterval, summary: summary ?? { await status().summary })
        await endpoint.watchConnection(logger: logger, bus: bus)
        return endpoint
    }

    /// `start`, for the daemon: on failure it logs the reason at error level and returns nil,
    /// and the daemon keeps running the fleet without a control interface.
    public static func startOrLog(
        bus: BusAddress, version: String = WearfleetVersion.current, logger: Logger,
        status: @escaping ControlInterface.StatusProvider, summary: (@Sendable () async -> String)? = nil,
        commands: (any FleetCommands)? = nil, fleet: FleetOrchestrator? = nil
    ) async -> ControlEndpoint? {
        do {
            let endpoint = try await start(
                bus: bus, version: version, logger: logger, status: status, summary: summary, commands: commands, fleet: fleet)
            logger.info("control interface ready", metadata: [
                "event": "control_ready", "bus_name": "\(WearfleetControl.busName)", "bus": "\(bus)",
            ])
            return endpoint
        } catch {
            logger.error("control interface unavailable, running without it: \(error)", metadata: [
                "event": "control_unavailable", "bus_name": "\(WearfleetControl.busName)", "bus": "\(bus)",
            ])
            return nil
        }
    }

    /// Gives up the name (callers then see "not running") and closes the connection.
    public func stop() async {
        stopping = true
        refresher?.cancel()
        refresher = nil
        live?.stop()
        _ = try? await connection.releaseName(WearfleetControl.busName)
        await connection.close()
    }

    // MARK: - Starting

    /// The watch hub and the state change signals.
    private func startLive(fleet: FleetOrchestrator, logger: Logger) async throws {
        let connection = self.connection
        do {
            live = try await LiveOutlet(fleet: fleet) { record in
                do {
                    try await connection.emitSignal(
                        path: WearfleetControl.objectPath, interface: WearfleetControl.interfaceName,
                        member: ControlInterface.deviceStateChangedSignal, ControlInterface.deviceStateChangedBody(record))
                } catch {
                    logger.warning("could not send DeviceStateChanged: \(error)", metadata: [
                        "event": "state_signal_failed", "device_address": "\(record.device.address)",
                    ])
                }
            }
        } catch {
            throw ControlEndpointError.failed(error)
        }
    }

    private func export(status: @escaping ControlInterface.StatusProvider, commands: ControlInterface.Commands?) async throws {
        let initial = await status()
        let interface = ControlInterface.definition(
            version: version, status: status,
            observed: { [weak self] snapshot in await self?.publish(summary: snapshot.summary) }, commands: commands,
            watch: live?.hub)
        do {
            try await connection.export(
                interface, properties: ControlInterface.properties(version: version, summary: initial.summary),
                at: WearfleetControl.objectPath)
        } catch {
            throw ControlEndpointError.failed(error)
        }
    }

    private func claimName() async throws {
        let reply: NameRequestReply
        do {
            reply = try await connection.requestName(WearfleetControl.busName, flags: .doNotQueue)
        } catch let error as DBusError where error.name == DBusError.accessDenied {
            throw ControlEndpointError.notPermitted(error)
        } catch {
            throw ControlEndpointError.failed(error)
        }
        switch reply {
        case .primaryOwner, .alreadyOwner:
            return
        case .exists, .inQueue:
            let owner = try? await connection.nameOwner(of: WearfleetControl.busName)
            throw ControlEndpointError.nameTaken(owner: owner)
        }
    }

    // MARK: - Summary

    private func startRefreshing(every interval: Duration, summary: @escaping @Sendable () async -> String) {
        refresher = Task { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                let line = await summary()
                guard let self else { return }
                await self.publish(summary: line)
            }
        }
    }

    /// A lost bus connection ends the interface (the daemon's BlueZ connection on the same bus
    /// is then lost too, and the daemon reports that); say so once.
    private func watchConnection(logger: Logger, bus: BusAddress) {
        let connection = self.connection
        Task { [weak self] in
            await connection.waitUntilDisconnected()
            guard let self, await !self.stopping else { return }
            logger.error("control interface lost its bus connection", metadata: [
                "event": "control_lost", "bus": "\(bus)",
            ])
        }
    }

    /// Sets `Summary`; the connection announces it only when it changed.
    private func publish(summary: String) async {
        try? await connection.setProperty(
            ControlInterface.summaryProperty, to: .string(summary), of: WearfleetControl.interfaceName,
            at: WearfleetControl.objectPath)
    }
}
