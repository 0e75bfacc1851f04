import CoreMetrics
import Fleet
import FleetConfiguration
import FleetCore
import Glibc
import Logging
import ServiceLifecycle

/// `[mqtt]` while the daemon runs: the fleet on a broker (`MQTTBridge` over an `MQTTClient`).
/// Optional, like metrics: when it is off, or cannot be set up (an unreadable password file),
/// the daemon runs without it and says why. A broker that is away is not a failure: the client
/// keeps trying. `apply` (a reload) reconnects with changed settings — the BLE links are not
/// touched. At stop the gateway's `offline` is published and the client disconnects cleanly.
///
/// With `[cluster]` on (`ownership` not nil) the connection also carries this gateway's share of
/// the agreement on which gateway connects each device (`OwnershipCoordinator`, joined to the
/// fleet by `OwnershipFleetLink`): the fleet connects only what it is given.
///
/// Needs the fleet service declared before it.
public struct MQTTService: SequencedService {
    public let name = "mqtt"
    private let outlet: MQTTOutlet
    private let fleet: StartedValue<FleetOrchestrator>

    public init(
        _ settings: MQTTSettings, ownership: OwnershipConfiguration? = nil, fleet: StartedValue<FleetOrchestrator>,
        metricsFactory: (any MetricsFactory)? = nil, environment: [String: String], logger: Logger
    ) {
        outlet = MQTTOutlet(
            settings: settings, ownership: ownership, counters: MQTTClientCounters(factory: metricsFactory), environment: environment,
            logger: logger)
        self.fleet = fleet
    }

    /// The figures of the current and earlier connections.
    public var counters: MQTTClientCounters { outlet.counters }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let orchestrator = try fleet.get()
        await outlet.start(orchestrator)
        reportStarted()
        try? await gracefulShutdown()
        await outlet.stop()
    }

    /// Applies a reloaded `[mqtt]` and `[cluster]` (`ownership`, nil when off): nothing when
    /// both are unchanged; new cluster numbers alone are taken by the running coordinator; else
    /// the old connection ends cleanly (`offline`) and the new one starts.
    public func apply(_ settings: MQTTSettings, ownership: OwnershipConfiguration? = nil) async {
        await outlet.apply(settings, ownership: ownership)
    }
}

/// The service's state: the settings in force and the connection running them.
actor MQTTOutlet {
    nonisolated let counters: MQTTClientCounters
    private var settings: MQTTSettings
    /// `[cluster]`, nil when off.
    private var ownership: OwnershipConfiguration?
    private let environment: [String: String]
    private let logger: Logger
    private var orchestrator: FleetOrchestrator?
    private var running: (
        client: MQTTClient, bridge: MQTTBridge, route: MQTTValueRoute, tap: UInt64, task: Task<Void, Never>,
        coordinator: OwnershipCoordinator?
    )?
    private var stopped = false
    /// The devices the replaced connection still published when it ended: the next connection
    /// deletes the retained topics of those the fleet removed in between.
    private var handedOver: MQTTBridge.Handover?

    init(
        settings: MQTTSettings, ownership: OwnershipConfiguration?, counters: MQTTClientCounters, environment: [String: String],
        logger: Logger
    ) {
        self.settings = settings
        self.ownership = ownership
        self.counters = counters
        self.environment = environment
        self.logger = logger
    }

    func start(_ orchestrator: FleetOrchestrator) async {
        self.orchestrator = orchestrator
        await connect()
    }

    func apply(_ new: MQTTSettings, ownership newOwnership: OwnershipConfiguration?) async {
        guard !stopped, new != settings || newOwnership != ownership else { return }
        let clusterToggled = (newOwnership == nil) != (ownership == nil)
        if new == settings, !clusterToggled, let newOwnership, let coordinator = running?.coordinator {
            // Lease, dwell and the rest change in place: what is known of claims and peers stays.
            ownership = newOwnership
            await coordinator.reconfigure(newOwnership)
            logger.notice("mqtt: cluster settings changed", metadata: ["event": "cluster_reconfigured"])
            return
        }
        logger.notice("mqtt: settings changed; reconnecting", metadata: ["event": "mqtt_reconfigured", "url": "\(new.url)"])
        settings = new
        ownership = newOwnership
        await disconnect(reconfiguring: true)
        if clusterToggled, newOwnership == nil, let orchestrator {
            // The fleet connects on its own again.
            await orchestrator.setOwnershipGate(enabled: false)
            logger.notice("cluster: off; this gateway connects its devices on its own", metadata: ["event": "cluster_stopped"])
        }
        await connect()
    }

    func stop() async {
        stopped = true
        await disconnect()
    }

    private func connect() async {
        // Only the very next connection checks what the replaced one handed over.
        let earlier = handedOver
        handedOver = nil
        guard settings.enabled, !stopped, let orchestrator else { return }
        let connection: (settings: MQTTConnectionSettings, topics: MQTTTopics)
        do {
            connection = try MQTTOutlet.connectionSettings(settings, environment: environment)
        } catch {
            logger.error("mqtt: \(error.message); running without MQTT", metadata: ["event": "mqtt_setup_failed"])
            warnClusterWithoutBroker()
            return
        }
        let route = MQTTValueRoute(topics: connection.topics)
        let ownershipTopics = OwnershipTopics(connection.topics)
        var connectionSettings = connection.settings
        if ownership != nil { connectionSettings.subscriptions += ownershipTopics.subscriptions }
        let client: MQTTClient
        do {
            client = try MQTTClient(
                settings: connectionSettings, random: SeededRandom(seed: UInt64.random(in: .min ... .max)), counters: counters,
                values: route, logger: logger)
        } catch {
            logger.error("mqtt: \(error.message); running without MQTT", metadata: ["event": "mqtt_setup_failed"])
            warnClusterWithoutBroker()
            return
        }
        let coordinator = ownership.map { configuration in
            OwnershipCoordinator(topics: ownershipTopics, configuration: configuration, publisher: client, logger: logger)
        }
        let bridge = MQTTBridge(
            client: client, route: route, topics: connection.topics, homeAssistantDiscovery: settings.homeAssistantDiscovery,
            allowed: settings.allowCommands, fleet: orchestrator, sessionRun: await orchestrator.sessionRun, settings: settings,
            status: { await orchestrator.status() }, ownership: coordinator, logger: logger)
        // Subscribe to the fleet before reading its status, so nothing falls between the two.
        // Values go straight from the ingest thread to the client's queue (the tap: a lock and an
        // append), rendered on the client's thread; events go through the bridge.
        let feed = orchestrator.fleetEvents(bufferingNewest: 8192)
        let tap = orchestrator.pipeline.tap { value in client.publishValue(value) }
        await bridge.start(status: await orchestrator.status(), earlier: earlier)
        guard !stopped else {
            // Stopped while this connection was being set up (the awaits above): it ends here.
            orchestrator.pipeline.untap(tap)
            await coordinator?.stop()
            await client.stop(final: MQTTMessage(topic: connection.topics.gatewayStatus, text: "offline", qos: 1, retain: true))
            route.finish()
            return
        }
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                let counters = self.counters
                group.addTask { await bridge.consume(feed, counting: counters) }
                group.addTask { await bridge.learn(from: route.notable) }
                group.addTask { await bridge.serve(client.events) }
                if let coordinator {
                    let link = OwnershipFleetLink(coordinator: coordinator, fleet: orchestrator, logger: logger) { owners, settled in
                        await bridge.noteOwners(owners, settled: settled)
                    }
                    group.addTask { await link.run() }
                }
                group.addTask {
                    // The gateway's `devices` and `info` while the fleet changes: at most once a second.
                    while (try? await Task.sleep(for: .seconds(1))) != nil { await bridge.flush() }
                }
                group.addTask {
                    // RSSI changes without an event: the state is refreshed every 30 s (unchanged ones are not sent).
                    while (try? await Task.sleep(for: .seconds(30))) != nil {
                        await bridge.refresh(from: await orchestrator.status())
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        running = (client, bridge, route, tap, task, coordinator)
        logger.notice(
            "mqtt: publishing to \(settings.url) under \(connection.topics.prefix)/ as gateway \(connection.topics.gatewayID)",
            metadata: ["event": "mqtt_started"])
        if let ownership {
            logger.notice(
                "cluster: sharing the fleet with the other gateways on the broker; devices connect here once given (lease \(ownership.lease), dwell \(ownership.dwell))",
                metadata: ["event": "cluster_started"])
        }
    }

    /// The cluster works through the broker: without MQTT no device is given to this gateway.
    private func warnClusterWithoutBroker() {
        guard ownership != nil else { return }
        logger.critical(
            "cluster: [cluster] is on but MQTT cannot run, so no device will be given to this gateway and none will connect; fix [mqtt] and reload",
            metadata: ["event": "cluster_without_broker"])
    }

    private func disconnect(reconfiguring: Bool = false) async {
        guard let (client, bridge, route, tap, task, coordinator) = running else { return }
        running = nil
        orchestrator?.pipeline.untap(tap)
        task.cancel()
        // Before the client's clean stop: its bids go, and the `offline` that follows frees its
        // devices for the peers at once.
        await coordinator?.stop()
        if reconfiguring, let orchestrator {
            // The reload that brought the new settings may have removed devices whose removal the
            // cancelled feed had not delivered yet: their retained topics go with this connection.
            handedOver = await bridge.forgetAbsent(from: await orchestrator.status())
        }
        let ended = await client.stop(final: MQTTMessage(topic: route.topics.gatewayStatus, text: "offline", qos: 1, retain: true))
        if reconfiguring, var handover = handedOver {
            // Read once the client has stopped: a value still queued when the stop began was
            // rendered (and its `…/latest` copy made) while it drained.
            for id in handover.devices {
                for kind in MQTTTopics.occasionalKinds {
                    guard let latest = client.retainedMessage(route.topics.latestValue(id, kind: kind)) else { continue }
                    handover.latestValues[id, default: [:]][kind] = latest.payload
                }
            }
            handedOver = handover
        }
        route.finish()
        await task.value
        if reconfiguring, !ended {
            // The thread is inside a blocking connect (libmosquitto's `mosquitto_connect`: DNS and
            // TCP, up to the kernel's connect timeout). A new client with the same client id must
            // not start before it ends: when that connect succeeds the broker would drop the new
            // connection for it. Once it returns, the thread sees the stop and sends DISCONNECT.
            logger.warning(
                "mqtt: the old connection is still connecting; the new one starts when it has ended",
                metadata: ["event": "mqtt_stop_waiting"])
            await client.threadEnded()
            logger.notice("mqtt: the old connection has ended", metadata: ["event": "mqtt_stop_waited"])
        }
    }

    struct SetupError: Error {
        let message: String
    }

    /// The client's settings from `[mqtt]`: the password read from its file (and read again by
    /// the client before each connection attempt), the gateway id and
    /// client id defaulted from the host name, the Will set to the gateway's `offline`.
    static func connectionSettings(
        _ settings: MQTTSettings, environment: [String: String]
    ) throws(SetupError) -> (settings: MQTTConnectionSettings, topics: MQTTTopics) {
        let gateway = settings.gatewayID ?? topicLevel(hostName())
        let topics = MQTTTopics(prefix: settings.topicPrefix, gatewayID: gateway, discoveryPrefix: settings.discoveryPrefix)
        var password: String?
        var passwordFile: String?
        if let file = settings.passwordFile {
            let path: String
            if file.hasPrefix("/") {
                path = file
            } else if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
                path = directory + "/" + file
            } else {
                throw SetupError(message: "password_file \"\(file)\" names a credential, but $CREDENTIALS_DIRECTORY is not set (LoadCredential= in the unit)")
            }
            guard let file = MQTTPasswordFile.read(path) else { throw SetupError(message: "cannot read the password file \(path)") }
            password = file.password
            passwordFile = path
        }
        var subscriptions = [topics.commandFilter, topics.gatewayRequestFilter]
        if settings.homeAssistantDiscovery { subscriptions.append(topics.homeAssistantStatus) }
        let connection = MQTTConnectionSettings(
            host: settings.host, port: settings.port, tls: settings.tls, clientID: settings.clientID ?? "wearfleet-\(gateway)",
            protocolVersion: settings.protocolVersion, username: settings.username, password: password,
            passwordFile: passwordFile, checkPasswordFileMode: settings.passwordFile?.hasPrefix("/") ?? false,
            caFile: settings.caFile, certFile: settings.certFile, keyFile: settings.keyFile,
            will: MQTTMessage(topic: topics.gatewayStatus, text: "offline", qos: 1, retain: true), subscriptions: subscriptions)
        return (connection, topics)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "wearfleet" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "wearfleet" : name
    }

    /// `name` as one topic level: '/', '+', '#' and NUL become '_'.
    static func topicLevel(_ name: String) -> String {
        String(name.map { "/+#\0".contains($0) ? "_" : $0 })
    }
}
