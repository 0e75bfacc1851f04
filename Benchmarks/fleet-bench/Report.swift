import Foundation

/// The table on stdout and the target checks, from one run's results.
enum Report {
    static func text(_ results: BenchResults) -> String {
        var sections: [String] = []
        if !results.ingest.isEmpty { sections.append(ingest(results)) }
        if !results.scale.isEmpty { sections.append(scale(results.scale)) }
        if let recovery = results.recovery { sections.append(self.recovery(recovery)) }
        if let writes = results.writes { sections.append(self.writes(writes)) }
        if let commands = results.commands { sections.append(self.commands(commands)) }
        if let mqtt = results.mqtt { sections.append(mqtt.text) }
        if !results.watch.isEmpty { sections.append(watch(results.watch)) }
        if let churn = results.churn { sections.append(self.churn(churn)) }
        if let cluster = results.cluster { sections.append(self.cluster(cluster)) }
        if !results.targets.isEmpty { sections.append(targets(results.targets)) }
        if !results.failures.isEmpty { sections.append("FAILED: " + results.failures.joined(separator: "\nFAILED: ")) }
        return sections.joined(separator: "\n\n")
    }

    private static func ingest(_ results: BenchResults) -> String {
        var table = TextTable([
            "ingest: devices×Hz×bytes path", "offered/s", "sent/s", "wf/s", "wf µs/n", "wf p50 ms", "wf p99 ms",
            "floor µs/n", "floor p99 ms", "wf µs/n beside bleak", "bleak/s", "bleak µs/n", "bleak p99 ms", "wf/floor CPU",
            "wf/bleak per CPU-s",
            "fd/dbus per CPU-s", "sim CPU %", "bus µs/n",
        ])
        for cell in results.ingest {
            let fdRatios = results.fdRatios(cell)
            let fdRatio = fdRatios?.overDBus
            let bleakRatio = cell.path == "fd" ? fdRatios?.overBleak : cell.ratioToBleak
            table.add([
                "\(cell.devices)×\(Int(cell.rateHz))×\(cell.payloadBytes) \(cell.path)", Format.number(cell.offeredPerSecond),
                Format.number(cell.sentPerSecond), Format.number(cell.wearfleet.perSecond),
                Format.number(cell.wearfleet.cpuMicrosecondsEach), Format.milliseconds(cell.wearfleet.p50Microseconds),
                Format.milliseconds(cell.wearfleet.p99Microseconds), Format.number(cell.floor?.cpuMicrosecondsEach),
                Format.milliseconds(cell.floor?.p99Microseconds), Format.number(cell.wearfleetBesideBleak?.cpuMicrosecondsEach),
                Format.number(cell.bleak?.perSecond),
                Format.number(cell.bleak?.cpuMicrosecondsEach), Format.milliseconds(cell.bleak?.p99Microseconds),
                Format.ratio(cell.ratioToFloor), Format.ratio(bleakRatio), Format.ratio(fdRatio),
                Format.number(cell.simulatorCPUPercent), Format.number(cell.busCPUMicrosecondsEach),
            ])
        }
        var setup = TextTable(["time to every device subscribed", "bleak + retry-connector (s)", "wearfleet, connecting (s)", "wearfleet, adopting bleak's links (s)"])
        for entry in results.ingestSetup {
            setup.add([
                "\(entry.devices) devices", Format.number(entry.bleakConnectSeconds), Format.number(entry.wearfleetReadySeconds),
                Format.number(entry.wearfleetAdoptSeconds),
            ])
        }
        return table.text + "\n(wf = wearfleet's runtime; µs/n = CPU microseconds per notification; on D-Bus rows the floor (dbus-floor) is measured on the same signals in the same window as wf, and bleak in another window of the same cell, beside wf and the floor (wf µs/n beside bleak); on fd rows the floor is fd-floor (epoll + recv on taps of wf's sockets: the same datagrams in the same window) and bleak's column is its D-Bus figure)\n\n" + setup.text
    }

    private static func scale(_ results: [ScaleResult]) -> String {
        var table = TextTable([
            "scale: known devices", "pinned", "RSS MB", "RSS/device kB", "READY s", "all pinned ready s", "at rest s",
            "idle CPU %", "idle s", "discovering at rest", "sim RSS MB",
        ])
        for result in results {
            table.add([
                "\(result.devices)", "\(result.pinned)", Format.number(Double(result.rssKilobytes) / 1024),
                Format.number(result.rssPerDeviceKilobytes), Format.number(result.readySeconds),
                Format.number(result.allPinnedReadySeconds), Format.number(result.settledSeconds),
                String(format: "%.3f", result.idleCPUPercent), Format.number(result.idleSeconds),
                result.discoveringAtRest ? "yes" : "no", Format.number(Double(result.simulatorRSSKilobytes) / 1024),
            ])
        }
        return table.text
    }

    private static func cluster(_ result: ClusterResult) -> String {
        var table = TextTable(["cluster: \(result.devices) straps over \(result.gateways) gateways, one broker ([cluster] defaults)", "value"])
        let handoffs = result.handoffSeconds.sorted()
        func percentile(_ fraction: Double) -> String {
            handoffs.isEmpty ? "–" : Format.number(handoffs[min(handoffs.count - 1, Int((Double(handoffs.count - 1) * fraction).rounded()))])
        }
        table.add(["cold start to every strap ready on its owner (s)", Format.number(result.coldStartSeconds)])
        table.add(["ownership messages per device per minute at rest", String(format: "%.2f", result.messagesPerDeviceMinute)])
        table.add(["handoff after a gateway's power loss (SIGKILL, its Will): p50 (s)", percentile(0.5)])
        table.add(["handoff p99 (s)", percentile(0.99)])
        table.add(["handoff max (s), straps handed over", "\(percentile(1)), \(handoffs.count)"])
        table.add(["double links in the world (must be 0)", "\(result.doubleLinks)"])
        table.add(["Connects refused: strap held by another gateway", "\(result.connectsRefusedHeldElsewhere)"])
        return table.text
    }

    private static func churn(_ result: ChurnResult) -> String {
        var table = TextTable(["churn: \(result.devices) passers-by over \(Int(result.seconds)) s", "value"])
        table.add(["RSS at rest before (MB)", Format.number(Double(result.startRSSKilobytes) / 1024)])
        table.add(["RSS peak during (MB)", Format.number(Double(result.peakRSSKilobytes) / 1024)])
        table.add(["RSS at rest after every object expired (MB)", Format.number(Double(result.endRSSKilobytes) / 1024)])
        table.add(["growth, end − start (kB)", "\(result.growthKilobytes)"])
        table.add(["daemon CPU during the stream (%)", Format.number(result.streamCPUPercent)])
        table.add(["pinned straps still ready", result.pinnedStillReady ? "yes" : "no"])
        return table.text
    }

    private static func recovery(_ result: RecoveryResult) -> String {
        var table = TextTable(["recovery: \(result.devices) pinned over \(result.adapters) adapters", "value"])
        table.add(["cold start to all ready (s)", Format.number(result.coldStartSeconds)])
        table.add(["bluetoothd down (s)", Format.number(result.bluetoothdDownSeconds)])
        table.add(["restart to all ready again (s)", Format.number(result.restartToAllReadySeconds)])
        table.add(["recovery after bluetoothd returned (s)", Format.number(result.recoverySeconds)])
        table.add(["FleetCore's bound r + k·L + (N−B)·I (s)", Format.number(result.promisedBoundSeconds)])
        table.add(["lower bound, any schedule (s)", Format.number(result.lowerBoundSeconds)])
        let peaks = result.maxAttemptsInFlightPerAdapter.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        table.add(["peak attempts in flight per adapter (promised ≤ 1)", peaks.isEmpty ? "–" : peaks])
        table.add(["connection attempts during recovery", "\(result.connectAttempts)"])
        return table.text
    }

    private static func watch(_ cells: [WatchCell]) -> String {
        var table = TextTable([
            "watch: devices×Hz, watchers + stalled", "sent/s", "daemon µs/value", "rounds", "vs no watcher (rounds)", "daemon CPU %",
            "watcher/s (each)", "p50 ms (each)", "p99 ms (each)", "dropped (each)",
        ])
        func percent(_ added: Double) -> String { String(format: "%+.0f%%", added * 100) }
        for cell in cells {
            table.add([
                "\(cell.devices)×\(Int(cell.rateHz)), \(cell.watchers) + \(cell.stalled) stalled", Format.number(cell.sentPerSecond),
                Format.number(cell.daemonCPUMicrosecondsEach),
                cell.daemonCPUMicrosecondsEachRounds.map { String(format: "%.1f", $0) }.joined(separator: " "),
                cell.addedToBaseline.map { "\(percent($0)) (\(cell.addedToBaselineRounds.map(percent).joined(separator: " ")))" } ?? "-",
                String(format: "%.1f", cell.daemonCPUPercent),
                cell.watcherPerSecond.map { Format.number($0) }.joined(separator: " "),
                cell.watcherP50Microseconds.map { Format.milliseconds($0) }.joined(separator: " "),
                cell.watcherP99Microseconds.map { Format.milliseconds($0) }.joined(separator: " "),
                cell.watcherDropped.map(String.init).joined(separator: " "),
            ])
        }
        return table.text
    }

    private static func writes(_ result: WriteResult) -> String {
        var table = TextTable(["writes without response: \(result.devices) devices", "value"])
        table.add(["driver", result.driver])
        table.add(["writes/s", Format.number(result.writesPerSecond)])
        table.add(["bytes/s", Format.number(result.bytesPerSecond)])
        table.add(["per device min / max writes", "\(result.perDeviceMin) / \(result.perDeviceMax)"])
        table.add(["fairness (min ÷ max)", Format.number(result.fairness)])
        table.add(["deepest bulk queue / capacity", "\(result.deepestQueue) / \(result.queueCapacity)"])
        table.add(["writes refused (queue full)", "\(result.refusedQueueFull)"])
        table.add(["received by the simulator", "\(result.receivedBySimulator)"])
        table.add(["driver CPU µs per write", Format.number(result.driverCPUMicrosecondsEach)])
        return table.text
    }

    private static func commands(_ result: CommandResult) -> String {
        var table = TextTable(["Write round trip, with response (\(result.writes) each, one in flight)", "p50 ms", "p99 ms"])
        table.add(["through wearfleetd (org.wearfleet.Daemon1.Write)", Format.number(result.daemonP50Milliseconds), Format.number(result.daemonP99Milliseconds)])
        table.add(["WriteValue on bluez-sim directly", Format.number(result.directP50Milliseconds), Format.number(result.directP99Milliseconds)])
        table.add([
            "what the daemon adds", Format.number(result.daemonP50Milliseconds - result.directP50Milliseconds),
            Format.number(result.daemonP99Milliseconds - result.directP99Milliseconds),
        ])
        return table.text + "\n(the simulated device takes \(Format.number(result.simulatedWriteLatencyMilliseconds)) ms to acknowledge each write)"
    }

    private static func targets(_ checks: [TargetCheck]) -> String {
        var table = TextTable(["target", "measured", "limit", "met", "C floors reach"])
        for check in checks { table.add([check.name, check.measured, check.target, check.met ? "yes" : "NO", check.floors ?? ""]) }
        return table.text
            + "\n(C floors reach: the same ratio with the C floors in the receivers' places, in the busy cell where it is lowest; below the limit, no receiver meets the target on this machine)"
    }
}
