import FleetCore

/// The issue's targets, each a ratio or a bound measured in the same run.
enum Targets {
    /// The ratios are judged on cells of at least this many notifications/s (the issue states
    /// the floor at 500/s): below, a receiver's fixed background work (timers, status) is spread
    /// over a handful of notifications and says nothing about the cost of one. The table shows
    /// every cell.
    static let busyCell = 500.0

    static func check(_ results: BenchResults) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        let dbus = results.ingest.filter { $0.path == "dbus" }
        let fd = results.ingest.filter { $0.path == "fd" }
        func worst(_ values: [(String, Double)], highIsGood: Bool) -> (String, Double)? {
            values.filter { $0.1.isFinite }.min { highIsGood ? $0.1 < $1.1 : $0.1 > $1.1 }
        }
        func label(_ cell: IngestCell) -> String { "\(cell.devices)×\(Int(cell.rateHz))×\(cell.payloadBytes)" }

        let busy = dbus.filter { $0.offeredPerSecond >= busyCell }
        if let (cell, ratio) = worst(busy.compactMap { c in c.ratioToFloor.map { (label(c), $0) } }, highIsGood: false) {
            checks.append(TargetCheck(
                name: "D-Bus path: CPU per notification ÷ C floor (worst cell ≥ 500/s)", measured: String(format: "%.2f× (%@)", ratio, cell),
                target: "≤ 1.25×", met: ratio <= 1.25))
        }
        let busyFD = fd.filter { $0.offeredPerSecond >= busyCell }
        /// The floors' lowest ratio over the busy cells, as the "C floors reach" column shows it.
        func floors(_ values: [(String, Double)]) -> String? {
            worst(values, highIsGood: true).map { String(format: "%.2f× (%@)", $0.1, $0.0) }
        }
        if let (cell, ratio) = worst(busy.compactMap { c in c.ratioToBleak.map { (label(c), $0) } }, highIsGood: true) {
            checks.append(TargetCheck(
                name: "D-Bus path: notifications per CPU-second ÷ bleak's (worst cell ≥ 500/s)",
                measured: String(format: "%.2f× (%@)", ratio, cell), target: "≥ 2×", met: ratio >= 2,
                floors: floors(busy.compactMap { c in results.floorRatios(c).overBleak.map { (label(c), $0) } })))
        }
        var fdOverDBus: [(String, Double)] = []
        var fdOverBleak: [(String, Double)] = []
        for cell in busyFD {
            guard let ratios = results.fdRatios(cell) else { continue }
            fdOverDBus.append((label(cell), ratios.overDBus))
            if let overBleak = ratios.overBleak { fdOverBleak.append((label(cell), overBleak)) }
        }
        if let (cell, ratio) = worst(fdOverDBus, highIsGood: true) {
            checks.append(TargetCheck(
                name: "fd path: notifications per CPU-second ÷ D-Bus path's (worst cell ≥ 500/s)",
                measured: String(format: "%.2f× (%@)", ratio, cell), target: "≥ 5×", met: ratio >= 5,
                floors: floors(busyFD.compactMap { c in results.floorRatios(c).overDBus.map { (label(c), $0) } })))
        }
        if let (cell, ratio) = worst(fdOverBleak, highIsGood: true) {
            checks.append(TargetCheck(
                name: "fd path: notifications per CPU-second ÷ bleak's (worst cell ≥ 500/s)", measured: String(format: "%.2f× (%@)", ratio, cell),
                target: "≥ 10×", met: ratio >= 10,
                floors: floors(busyFD.compactMap { c in results.floorRatios(c).overBleak.map { (label(c), $0) } })))
        }
        // Not one of the issue's targets: how close the daemon's fd path comes to a receiver that
        // only counts the same datagrams (fd-floor), as the first target asks of the D-Bus path.
        if let (cell, ratio) = worst(busyFD.compactMap { c in c.ratioToFloor.map { (label(c), $0) } }, highIsGood: false) {
            checks.append(TargetCheck(
                name: "fd path: CPU per notification ÷ fd floor (worst cell ≥ 500/s; ours, not the issue's)",
                measured: String(format: "%.2f× (%@)", ratio, cell), target: "≤ 1.25×", met: ratio <= 1.25))
        }
        for setup in results.ingestSetup {
            guard let ready = setup.wearfleetReadySeconds, let bound = coldStartBound(devices: setup.devices, results: results) else { continue }
            let bleak = setup.bleakConnectSeconds.map { String(format: ", bleak %.1f s", $0) } ?? ""
            checks.append(TargetCheck(
                name: "\(setup.devices) devices: start to all pinned ready, within the slots/latency bound",
                measured: String(format: "%.2f s%@", ready, bleak), target: String(format: "≤ %.2f s", bound), met: ready <= bound))
        }
        if let largest = results.scale.max(by: { $0.devices < $1.devices }) {
            let megabytes = Double(largest.rssKilobytes) / 1024
            checks.append(TargetCheck(
                name: "\(largest.devices) known devices: RSS", measured: String(format: "%.1f MB", megabytes), target: "≤ 40 MB",
                met: megabytes <= 40))
        }
        for result in results.scale {
            checks.append(TargetCheck(
                name: "\(result.devices) known devices: idle CPU over \(Int(result.idleSeconds)) s",
                measured: String(format: "%.3f %%", result.idleCPUPercent), target: "≤ 0.1 %", met: result.idleCPUPercent <= 0.1))
        }
        if let recovery = results.recovery {
            let peak = recovery.maxAttemptsInFlightPerAdapter.values.max() ?? 0
            checks.append(TargetCheck(
                name: "recovery: peak attempts in flight on one adapter", measured: "\(peak)", target: "≤ 1", met: peak <= 1))
            checks.append(TargetCheck(
                name: "recovery: after bluetoothd returned, all \(recovery.devices) ready",
                measured: String(format: "%.2f s", recovery.recoverySeconds), target: String(format: "≤ %.2f s (bound)", recovery.promisedBoundSeconds),
                met: recovery.recoverySeconds <= recovery.promisedBoundSeconds))
        }
        if let churn = results.churn {
            checks.append(TargetCheck(
                name: "churn: RSS after \(churn.devices) passers-by, at rest, minus before",
                measured: "\(churn.growthKilobytes) kB", target: "≤ \(ChurnSuite.allowedGrowthKilobytes) kB",
                met: churn.growthKilobytes <= ChurnSuite.allowedGrowthKilobytes))
        }
        if let writes = results.writes {
            checks.append(TargetCheck(
                name: "writes: queue bound held", measured: "\(writes.deepestQueue) queued at most",
                target: "≤ \(writes.queueCapacity)", met: writes.deepestQueue <= writes.queueCapacity))
        }
        // Live values out: what watch clients add to the daemon's CPU per value (the median of
        // the rounds' own comparisons with their no-watcher cell).
        if let added = results.watch.first(where: { $0.watchers == 1 && $0.stalled == 0 })?.addedToBaseline {
            checks.append(TargetCheck(
                name: "watch: one watcher's addition to the daemon's CPU per value", measured: String(format: "%+.0f%%", added * 100),
                target: "≤ +25%", met: added <= 0.25))
        }
        if let added = results.watch.first(where: { $0.watchers == 0 && $0.stalled == 1 })?.addedToBaseline {
            // "Nothing measurable": within the run-to-run spread of this machine's cells (±10%).
            checks.append(TargetCheck(
                name: "watch: a stalled watcher's addition to the daemon's CPU per value", measured: String(format: "%+.0f%%", added * 100),
                target: "≤ +10% (noise)", met: added <= 0.10))
        }
        // MQTT: what publishing adds to the daemon's CPU per value, over a C libmosquitto
        // publisher sending the same messages (the median round).
        if let mqtt = results.mqtt, mqtt.floorCPUMicrosecondsPerMessage > 0 {
            let ratio = mqtt.publishingRatioToFloor
            checks.append(TargetCheck(
                name: "mqtt: daemon CPU added per published value ÷ C libmosquitto publisher's",
                measured: String(format: "%.2f×", ratio), target: "≤ 1.5×", met: ratio <= 1.5))
        }
        return checks
    }

    /// From start, with no first-retry delay: the busiest adapter's serial attempts and the token
    /// bucket, as in `PoolPolicy.recoveryBound`, with the ingest fleet's adapters and slots.
    static func coldStartBound(devices: Int, results: BenchResults) -> Double? {
        let latency = Duration.seconds((0.3 + 0.8) * results.timeScale)
        let adapters = 4
        let slots = max(5, (devices + adapters - 1) / adapters)
        let interval = Duration.milliseconds(Int(results.attemptInterval.prefix { $0.isNumber }) ?? 250)
        return PoolPolicy.recoveryBound(
            devices: devices, adapters: adapters, slotsPerAdapter: slots, connectLatency: latency, firstRetryDelay: .zero,
            rateLimit: AttemptRateLimit(burst: 4, refillInterval: interval))?.seconds
    }
}
