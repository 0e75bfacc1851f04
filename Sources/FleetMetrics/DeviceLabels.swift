import Fleet
import FleetCore

/// The label values that identify a device in every series: `address` (BlueZ's spelling, with
/// ` (random)` for a random address, so two devices never share it), `name` ("" when unset) and
/// `class` (`default`, the class of devices that name none, when unset). They are fixed when the
/// device joins and never change while the daemon runs.
struct DeviceLabels: Sendable {
    let identity: [(String, String)]

    init(_ device: FleetObservedDevice) {
        identity = [("address", device.id.description), ("name", device.name ?? ""), ("class", device.className ?? "default")]
    }

    func matches(_ other: DeviceLabels) -> Bool {
        identity.map { "\($0)=\($1)" } == other.identity.map { "\($0)=\($1)" }
    }

    /// Identity plus `adapter`, for the gauges that describe the device now.
    func present(adapter: String) -> [(String, String)] {
        identity + [("adapter", adapter)]
    }
}

extension OutgoingWriteType {
    /// The `type` label of `wearfleet_device_writes_total`.
    var metricLabel: String {
        switch self {
        case .withResponse: "with_response"
        case .withoutResponse: "without_response"
        }
    }

    static let all: [OutgoingWriteType] = [.withResponse, .withoutResponse]
}

extension DeviceState {
    /// Every value of the `state` label, in the order the states are documented.
    static let metricNames = names
}
