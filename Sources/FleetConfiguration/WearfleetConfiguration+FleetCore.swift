// The configuration speaks the operator's language (sections, names, strings); FleetCore takes its
// own value types. These conversions are the only place the two meet, so the daemon wires the
// policy objects directly from a loaded configuration.

import TOML
import FleetCore

extension WearfleetConfiguration {
    /// The pool policy's limits: `[fleet]` connection budget and pacing plus `[pool]` hysteresis
    /// and score weights.
    public var poolConfiguration: PoolConfiguration {
        PoolConfiguration(
            maxConnections: fleet.maxConnections,
            defaultSlotsPerAdapter: fleet.slotsPerAdapter,
            slotOverrides: fleet.adapterSlots,
            minimumDwell: pool.minimumDwell,
            scoreMargin: pool.scoreMargin,
            weights: pool.weights,
            attemptRateLimit: AttemptRateLimit(burst: fleet.attemptBurst, refillInterval: fleet.attemptInterval)
        )
    }

    /// `[cluster]` and the pinned devices' `preferred_gateways`, as the ownership machine takes
    /// them; what the file does not set (grace, bid pacing, hysteresis, scoring) is the
    /// machine's default. Whether the daemon runs the machine at all is `cluster.enabled`.
    public var ownershipConfiguration: OwnershipConfiguration {
        var preferredGateways: [DeviceID: Set<GatewayID>] = [:]
        for device in pinned where !device.preferredGateways.isEmpty {
            preferredGateways[device.id] = device.preferredGateways
        }
        return OwnershipConfiguration(
            lease: cluster.lease,
            renewal: cluster.renewal,
            settle: cluster.settle,
            margin: cluster.margin,
            dwell: cluster.dwell,
            preferredGateways: preferredGateways
        )
    }

    /// What the daemon shares the fleet with other gateways by, or nil when it does not:
    /// `[cluster]` on (which validation allows only with `[mqtt]` on).
    public var clusterOwnership: OwnershipConfiguration? {
        cluster.enabled && mqtt.enabled ? ownershipConfiguration : nil
    }

    /// `[reconnect]`, as the reconnect controller takes it.
    public var reconnectPolicy: ReconnectPolicy { reconnect }

    /// The state machine configuration of every class, by class name.
    public var stateMachineConfigurations: [String: DeviceStateMachine.Configuration] {
        classes.mapValues(\.stateMachineConfiguration)
    }

    /// The pinned device's class, resolved.
    public func deviceClass(for device: PinnedDevice) -> DeviceClassSettings {
        deviceClass(named: device.className)
    }
}

extension DeviceClassSettings {
    /// What the device state machine needs: UUIDs in BlueZ's lower-case 128-bit spelling.
    public var stateMachineConfiguration: DeviceStateMachine.Configuration {
        DeviceStateMachine.Configuration(
            requiredServices: Set(requiredServices.map(\.description)),
            requiredCharacteristics: Set(requiredCharacteristics.map(\.description)),
            readOnConnect: read.map(\.description),
            subscriptions: subscribe.map(\.description),
            useFileDescriptorPath: fileDescriptorPath,
            timeouts: timeouts,
            writeFailureThreshold: writeFailureThreshold,
            bond: bond,
            intermittent: intermittent,
            setTime: setTime
        )
    }

    /// The outgoing scheduler's per-device limits for this class.
    public var outgoingConfiguration: OutgoingConfiguration {
        OutgoingConfiguration(
            controlQueueCapacity: queueDepth[.control] ?? 16,
            normalQueueCapacity: queueDepth[.normal] ?? 64,
            bulkQueueCapacity: queueDepth[.bulk] ?? 256
        )
    }

    public var outgoingDeviceOptions: OutgoingDeviceOptions {
        OutgoingDeviceOptions(
            // One write with response at a time: ATT's rule, and bluetoothd's (a second pending one fails InProgress).
            coalescingWindow: coalescingWindow, queueCapacities: queueDepth, maxInFlightWithResponse: 1)
    }
}
