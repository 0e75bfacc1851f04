import TOML
import FleetCore
import GATT

/// `[classes.NAME]`: what the daemon does with a kind of device once it is connected, and the
/// limits of its outgoing writes. Pinned devices and pool rules name a class; `default` always
/// exists (built in, and may be redefined).
public struct DeviceClassSettings: Equatable, Sendable {
    public static let defaultName = "default"

    public var name: String
    /// Read once after every connect, in this order.
    public var read: [BluetoothUUID] = []
    /// Subscribed after every connect, in this order.
    public var subscribe: [BluetoothUUID] = []
    /// A device lacking one of these is a protocol failure.
    public var requiredServices: [BluetoothUUID] = []
    /// A device lacking one of these is a protocol failure. A `read` or `subscribe`
    /// characteristic that is missing only degrades the device, unless it is also listed here.
    public var requiredCharacteristics: [BluetoothUUID] = []
    /// Notifications through `AcquireNotify` sockets and writes through `AcquireWrite`.
    public var fileDescriptorPath: Bool = false
    /// Queue capacity per QoS class. Defaults: control 16, normal 64, bulk 256.
    public var queueDepth: [OutgoingQoS: Int] = [.control: 16, .normal: 64, .bulk: 256]
    /// The QoS of writes that do not name one. Default `normal`.
    public var defaultQoS: OutgoingQoS = .normal
    /// Replaceable writes to the same characteristic within this window are coalesced; nil: never.
    public var coalescingWindow: Duration?
    /// Consecutive failed writes that make a ready device degraded. Default 3.
    public var writeFailureThreshold: Int = 3
    public var timeouts = DeviceStateMachine.Timeouts()
    /// Bond before reading or subscribing (a device whose measurements are encrypted).
    public var bond = false
    /// The devices sleep between measurements: absent is their normal state (`asleep`).
    public var intermittent = false
    /// Write the gateway's time to the device's Current Time (0x2A2B) on every connection.
    public var setTime = false

    public init(name: String) {
        self.name = name
    }
}
