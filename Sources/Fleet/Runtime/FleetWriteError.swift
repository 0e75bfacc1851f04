import FleetCore

/// Why a write was refused before it was queued.
public enum FleetWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownDevice(DeviceID)
    /// BlueZ shows no such characteristic on the device (not connected yet, or absent).
    case unknownCharacteristic(DeviceID, String)
    /// Its flags allow neither the requested kind of write nor any other.
    case notWritable(DeviceID, String)
    /// Its queue for this class of service is full: the caller should slow down.
    case queueFull(DeviceID, OutgoingQoS, depth: Int)
    case tooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .unknownDevice(let id): "\(id.address) is not a device of the fleet"
        case .unknownCharacteristic(let id, let uuid): "\(id.address) has no characteristic \(uuid)"
        case .notWritable(let id, let uuid): "characteristic \(uuid) of \(id.address) cannot be written that way"
        case .queueFull(let id, let qos, let depth): "the \(qos) write queue of \(id.address) is full (\(depth) writes)"
        case .tooLarge(let size, let limit): "a \(size)-byte write exceeds the \(limit)-byte limit"
        }
    }
}
