// The reconnect controller, the pool policy and the logs all speak of failures by class, never by
// BlueZ's error strings: classification happens once, in `BlueZErrorClassifier`.

/// Why a connection attempt or a link failed, as far as retry policy is concerned.
public enum FailureClass: String, Hashable, Sendable, CaseIterable {
    /// Radio or link loss that usually heals by itself (`le-connection-abort-by-remote`, timeouts).
    case transient
    /// The adapter has no free LE connection slot (`le-connection-concurrent-connection-limit`).
    case outOfSlots
    /// The adapter is powered off or missing.
    case bluetoothOff
    /// bluetoothd or the adapter is not ready yet (`org.bluez.Error.NotReady`).
    case notReady
    /// The device answered but not as expected: missing service or characteristic, bad handshake.
    case `protocol`
    /// The device object is gone (`UnknownObject`, `DoesNotExist`): rediscover before retrying.
    case gone
    /// Another operation is in progress (`org.bluez.Error.InProgress`).
    case busy
    /// Authentication or permission refused (`NotAuthorized`, `NotPermitted`, `AuthenticationFailed`).
    case denied
    /// Anything not recognised; treated cautiously.
    case unknown
}
