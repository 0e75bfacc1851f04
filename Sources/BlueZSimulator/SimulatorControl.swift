import DBus

/// `org.wearfleet.Simulator1` at `/org/wearfleet/simulator` on the name `org.wearfleet.Simulator`:
/// the control interface tests, benchmarks and people (`busctl call`) use to inject faults and
/// read counters.
///
/// Device arguments are addresses (`AA:BB:CC:DD:EE:FF`); an empty string means every device.
/// Adapter arguments are names (`hci0`); empty means every adapter. Unknown ones fail with
/// `org.freedesktop.DBus.Error.InvalidArgs`.
public enum SimulatorControl {
    public static let interfaceName = "org.wearfleet.Simulator1"

    static func interface(for simulator: BlueZSimulator) -> DBusInterface {
        @Sendable func target(_ text: String) -> String? { text.isEmpty ? nil : text }
        @Sendable func apply(_ fault: FaultCommand) async throws -> [DBusValue] {
            try await simulator.apply(fault)
            return []
        }
        let options = DBusType.dictionary(key: .string, value: .variant)
        return DBusInterface(
            interfaceName,
            methods: worldMethods(for: simulator) + [
                DBusMethod(
                    "SetConnectFailure", inputs: [.init("device", .string), .init("error", .string), .init("probability", .double)],
                    handler: .async { call in
                        let error = try call.body.decode(String.self, at: 1)
                        return try await apply(
                            FaultCommand(
                                .connectFailure, device: target(try call.body.decode(String.self, at: 0)),
                                error: error.isEmpty ? nil : error, probability: try call.body.decode(Double.self, at: 2)))
                    }),
                DBusMethod("SetLinkLoss", inputs: [.init("device", .string), .init("mean_seconds", .double)], handler: .async { call in
                    try await apply(
                        FaultCommand(
                            .linkLoss, device: target(try call.body.decode(String.self, at: 0)), seconds: try call.body.decode(Double.self, at: 1)))
                }),
                DBusMethod("DropLink", inputs: [.init("device", .string)], handler: .async { call in
                    try await apply(FaultCommand(.dropLink, device: target(try call.body.decode(String.self, at: 0))))
                }),
                DBusMethod("SetResolveDelay", inputs: [.init("device", .string), .init("seconds", .double)], handler: .async { call in
                    try await apply(
                        FaultCommand(
                            .resolveDelay, device: target(try call.body.decode(String.self, at: 0)), seconds: try call.body.decode(Double.self, at: 1)))
                }),
                DBusMethod("SetMissingService", inputs: [.init("device", .string), .init("uuid", .string)], handler: .async { call in
                    try await apply(
                        FaultCommand(
                            .missingService, device: target(try call.body.decode(String.self, at: 0)), uuid: try call.body.decode(String.self, at: 1)))
                }),
                DBusMethod("SetInRange", inputs: [.init("device", .string), .init("in_range", .boolean)], handler: .async { call in
                    let inRange = try call.body.decode(Bool.self, at: 1)
                    return try await apply(FaultCommand(inRange ? .inRange : .outOfRange, device: target(try call.body.decode(String.self, at: 0))))
                }),
                DBusMethod("SetAdapterPowered", inputs: [.init("adapter", .string), .init("powered", .boolean)], handler: .async { call in
                    try await apply(
                        FaultCommand(
                            .adapterPower, adapter: target(try call.body.decode(String.self, at: 0)), powered: try call.body.decode(Bool.self, at: 1)))
                }),
                // The `stall-discovery` fault: the adapter's discovery reports nothing until it ends.
                DBusMethod("StallDiscovery", inputs: [.init("adapter", .string)], handler: .async { call in
                    try await apply(FaultCommand(.stallDiscovery, adapter: target(try call.body.decode(String.self, at: 0))))
                }),
                // The `reject-writes` fault: writes to `uuid` are refused with ATT error `att_error`
                // (0: 0xfc); an empty uuid ends it.
                DBusMethod(
                    "SetRejectWrites", inputs: [.init("device", .string), .init("uuid", .string), .init("att_error", .byte)],
                    handler: .async { call in
                        let code = try call.body.decode(UInt8.self, at: 2)
                        return try await apply(
                            FaultCommand(
                                .rejectWrites, device: target(try call.body.decode(String.self, at: 0)),
                                uuid: try call.body.decode(String.self, at: 1), attError: code == 0 ? nil : Int(code)))
                    }),
                DBusMethod("RestartBluetoothd", inputs: [.init("down_seconds", .double)], handler: .async { call in
                    let seconds = try call.body.decode(Double.self, at: 0)
                    return try await apply(FaultCommand(.restart, seconds: seconds < 0 ? nil : seconds))
                }),
                // The `restart` fault with `killed`: bluetoothd dies as by SIGKILL, leaving its links
                // to the kernel, and is started again after `down_seconds` (negative: `restartDelay`).
                DBusMethod("KillBluetoothd", inputs: [.init("down_seconds", .double)], handler: .async { call in
                    let seconds = try call.body.decode(Double.self, at: 0)
                    return try await apply(FaultCommand(.restart, seconds: seconds < 0 ? nil : seconds, killed: true))
                }),
                DBusMethod(
                    "SetMotionStream", inputs: [.init("device", .string), .init("rate_hz", .double), .init("payload_size", .uint32)],
                    handler: .async { call in
                        try await simulator.setMotionStream(
                            device: target(try call.body.decode(String.self, at: 0)), rateHz: try call.body.decode(Double.self, at: 1),
                            payloadSize: Int(try call.body.decode(UInt32.self, at: 2)))
                        return []
                    }),
                DBusMethod(
                    "TapNotifySockets", inputs: [.init("device", .string)], outputs: [.init("sockets", .array(.unixFD))],
                    handler: .async { call in
                        let taps = try await simulator.tapNotifySockets(of: try call.body.decode(String.self, at: 0))
                        return [.array(element: .unixFD, taps.map { .unixFD($0) })]
                    }),
                // Closes bluetoothd's end of the device's AcquireNotify sockets, the link staying up.
                DBusMethod(
                    "CloseNotifySockets", inputs: [.init("device", .string)], outputs: [.init("closed", .uint32)],
                    handler: .async { call in
                        let closed = await simulator.closeNotifySockets(address: target(try call.body.decode(String.self, at: 0)))
                        return [.uint32(UInt32(clamping: closed))]
                    }),
                // A measurement device wakes now (takes its measurements and advertises for its
                // awake window; an awake one measures again); empty: every measurement device.
                DBusMethod("Wake", inputs: [.init("device", .string)], handler: .async { call in
                    try await simulator.wakeForControl(target(try call.body.decode(String.self, at: 0)))
                    return []
                }),
                DBusMethod("ClearFaults", inputs: [.init("device", .string)], handler: .async { call in
                    try await apply(FaultCommand(.clear, device: target(try call.body.decode(String.self, at: 0))))
                }),
                DBusMethod("GetCounters", outputs: [.init("counters", options)], handler: .async { _ in
                    [counterMap(await simulator.counterSnapshot(), restarts: await simulator.restartCount)]
                }),
                DBusMethod("ResetCounters", handler: .async { _ in
                    await simulator.resetCounters()
                    return []
                }),
                DBusMethod(
                    "GetDevices", outputs: [.init("devices", .dictionary(key: .string, value: options))],
                    handler: .async { _ in
                        let entries = await simulator.deviceSummaries().map {
                            DBusDictEntry(key: .string($0.address), value: .stringVariantMap($0.values))
                        }
                        return [.dictionary(key: .string, value: options, entries)]
                    }),
            ])
    }

    /// Offered only by an instance that plays a gateway of a shared world (`SharedWorld`), so an
    /// instance of its own has exactly the interface it had before worlds existed.
    private static func worldMethods(for simulator: BlueZSimulator) -> [DBusMethod] {
        guard simulator.worldGateway != nil else { return [] }
        let options = DBusType.dictionary(key: .string, value: .variant)
        return [
            // The world's ledger, per device (`WorldDeviceRecord`): Holder ("" when it
            // advertises), LinkedBy, LinksMade, ConnectsWhileHeldElsewhere, HeldAtDeath (a{su}),
            // DoubleLinks (u), RSSI (a{sn}: run-time changes).
            DBusMethod(
                "GetWorld", outputs: [.init("devices", .dictionary(key: .string, value: options))],
                handler: .async { _ in
                    let entries = try await simulator.worldSummaries().map {
                        DBusDictEntry(key: .string($0.address), value: .stringVariantMap($0.values))
                    }
                    return [.dictionary(key: .string, value: options, entries)]
                }),
            // Gateway `gateway` ("": this one) hears the device at `rssi` dBm from its next
            // discovery pass, whichever instance is asked.
            DBusMethod(
                "SetWorldRSSI", inputs: [.init("device", .string), .init("gateway", .string), .init("rssi", .int16)],
                handler: .async { call in
                    try await simulator.setWorldRSSI(
                        device: try call.body.decode(String.self, at: 0), gateway: try call.body.decode(String.self, at: 1),
                        rssi: Int(try call.body.decode(Int16.self, at: 2)))
                    return []
                }),
        ]
    }

    /// Counters as `a{sv}`: per-device and per-adapter maps are `a{su}`.
    static func counterMap(_ counters: SimulatorCounters, restarts: Int) -> DBusValue {
        func map(_ values: [String: Int]) -> DBusValue {
            .dictionary(
                key: .string, value: .uint32,
                values.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .uint32(UInt32(clamping: $0.value))) })
        }
        return .stringVariantMap([
            "ConnectAttempts": map(counters.connectAttempts),
            "MaxConcurrentAttempts": map(counters.maxConcurrentAttempts),
            "NotificationsSent": map(counters.notificationsSent),
            "NotificationsDropped": .uint64(UInt64(counters.notificationsDropped)),
            "WritesReceived": map(counters.writesReceived),
            "LinkDrops": map(counters.linkDrops),
            "WritesRefused": map(counters.writesRefused),
            "AdvertisementsUnreported": map(counters.advertisementsUnreported),
            "TotalNotificationsSent": .uint64(UInt64(counters.totalNotificationsSent)),
            "TotalWritesReceived": .uint64(UInt64(counters.totalWritesReceived)),
            "Restarts": .uint32(UInt32(clamping: restarts)),
            "PassersByArrived": .uint64(UInt64(counters.passersByArrived)),
            "PassersByGone": .uint64(UInt64(counters.passersByGone)),
            "Pairings": map(counters.pairings),
            "PairingFailures": .uint64(UInt64(counters.pairingFailures)),
            "AgentRequests": .uint64(UInt64(counters.agentRequests)),
            "WakeUps": map(counters.wakeUps),
            "RecordsTaken": map(counters.recordsTaken),
            "RecordsDelivered": map(counters.recordsDelivered),
            "ClockWrites": map(counters.clockWrites),
            "LastClockWritten": .dictionary(
                key: .string, value: .array(.byte),
                counters.lastClockWritten.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .bytes($0.value)) }),
            "PendingConnects": map(counters.pendingConnects),
        ])
    }
}
