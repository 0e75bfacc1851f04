import Foundation

/// Follows `wearfleetd --log-format json` output in a file and keeps each device's latest state
/// from its `state_changed` lines. The daemon's own log is the only outside view of when a
/// device became ready (the figure systemd's `STATUS=` gives is refreshed every 5 s only).
final class DaemonLog {
    private let handle: FileHandle
    private var pending = Data()
    /// device address → latest state name.
    private(set) var states: [String: String] = [:]
    /// device address → the monotonic time the latest `ready` was read.
    private(set) var readySince: [String: Double] = [:]
    /// Devices seen leaving `ready` since `markLeaves()`.
    private(set) var left: Set<String> = []

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError("cannot read \(path)") }
        self.handle = handle
    }

    /// Reads what was appended since the last call.
    func poll() {
        pending.append(handle.readDataToEndOfFile())
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = pending[pending.startIndex..<newline]
            pending.removeSubrange(pending.startIndex...newline)
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                let metadata = object["metadata"] as? [String: Any],
                metadata["event"] as? String == "state_changed",
                let address = metadata["device_address"] as? String,
                let state = metadata["device_state"] as? String
            else { continue }
            if states[address] == "ready", state != "ready" { left.insert(address) }
            states[address] = state
            if state == "ready" { readySince[address] = MonotonicTime.seconds }
        }
    }

    func readyCount(of addresses: [String]) -> Int {
        addresses.filter { states[$0.uppercased()] == "ready" || states[$0] == "ready" }.count
    }

    func forgetLeaves() { left.removeAll() }

    /// Polls every 20 ms until `condition` holds; returns the monotonic time it first held.
    func wait(within seconds: Double, _ what: String, until condition: () -> Bool) throws -> Double {
        let deadline = MonotonicTime.seconds + seconds
        while MonotonicTime.seconds < deadline {
            poll()
            if condition() { return MonotonicTime.seconds }
            MonotonicTime.sleep(0.02)
        }
        throw BenchError("timed out after \(Int(seconds)) s waiting for \(what)")
    }
}
