import FleetCore
import FleetState

// Run-time pins outlive the process: restored from the state directory before start, saved
// after every accepted `pin` and `unpin`, before the command answers.

extension FleetOrchestrator {
    /// Restores the pins `file` holds (merged with the configuration's at `start`) and saves
    /// every later change to it. Call before `start()`.
    public func keepRuntimePins(in file: RuntimePinsFile) async {
        let pins = await file.load()
        if !pins.isEmpty { await submit(.restoreRuntimePins(pins)) }
        runtimePinsFile = file
    }

    /// Saves `pins` as the run-time pins. A failed save is logged (`runtime_pins_save_failed`)
    /// and thrown; `pin` and `unpin` then leave the fleet as it was.
    func saveRuntimePins(_ pins: [FleetRuntimeConfiguration.PinnedDevice]) async throws(FleetCommandError) {
        guard let file = runtimePinsFile else { return }
        runtimePinsGeneration += 1
        let generation = runtimePinsGeneration
        do {
            try await file.save(pins, generation: generation)
        } catch {
            logger.error("could not save the runtime pins: \(error)", metadata: [
                "event": "runtime_pins_save_failed", "path": "\(file.file.path)",
            ])
            throw .notSaved(reason: "\(error)")
        }
    }
}
