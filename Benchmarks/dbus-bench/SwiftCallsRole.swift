import DBus

/// Round trips through the Swift library: `inflight` tasks each call `Ping` back to back for
/// `seconds`, so `inflight` calls are outstanding at any time (the C client does the same).
func runSwiftCalls(address: String, inflight: Int, seconds: Double) async throws -> RoleReport {
    let connection = try await DBusConnection.connect(to: .address(address), threadName: "bench-calls")
    defer { Task { await connection.close() } }
    let cpuBefore = processCPUMicroseconds()
    let start = Clock.now
    let end = start + seconds
    let count = try await withThrowingTaskGroup(of: Int64.self) { group in
        for _ in 0..<inflight {
            group.addTask {
                var done: Int64 = 0
                while Clock.now < end {
                    // A timeout on every call: a lost reply ends the run with an error.
                    _ = try await connection.call(
                        destination: BenchNames.service, path: BenchNames.path, interface: BenchNames.interface,
                        member: "Ping", timeout: BenchNames.idleLimit)
                    done += 1
                }
                return done
            }
        }
        return try await group.reduce(0, +)
    }
    return RoleReport(count: count, seconds: Clock.now - start, cpuMicroseconds: processCPUMicroseconds() - cpuBefore)
}
