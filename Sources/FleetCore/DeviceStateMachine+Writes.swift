// The outgoing scheduler owns write queues and credits; the device machine only watches that
// writes complete (a hung write means a dead link) and whether they keep failing.

extension DeviceStateMachine {
    mutating func writeStarted(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard state.isLinked else { return }
        link.outstandingWrites += 1
        if link.outstandingWrites == 1 {
            arm(.write, at: now + configuration.timeouts.write, &effects)
        }
    }

    mutating func writeFinished(failure: DeviceEvent.Failure?, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard state.isLinked, link.outstandingWrites > 0 else { return }
        link.outstandingWrites -= 1
        if link.outstandingWrites == 0 {
            disarm(.write, &effects)
        } else {
            // The next write in line gets a full timeout of its own.
            arm(.write, at: now + configuration.timeouts.write, &effects)
        }
        if failure == nil {
            link.consecutiveWriteFailures = 0
        } else {
            link.consecutiveWriteFailures += 1
        }
        if link.setupFinished { settle(now: now, &effects) }
    }
}
