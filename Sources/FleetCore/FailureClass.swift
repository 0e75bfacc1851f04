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
    /// Bonding failed (`Device1.Pair`, or the pairing bluetoothd started for an encrypted
    /// characteristic): the key was wrong, the device or an agent refused, nobody answered in
    /// time, or it was cancelled. Its own budget, so a wrong passkey is not retried in a loop
    /// (`PairingFailure` says which).
    case pairing
    /// Anything not recognised; treated cautiously.
    case unknown
}

/// Which way a bonding failed (`FailureClass.pairing`), from bluetoothd's answer to `Pair`.
public enum PairingFailure: String, Hashable, Sendable, CaseIterable {
    /// The key did not match: a wrong or missing passkey (`AuthenticationFailed`).
    case wrongKey
    /// The device, bluetoothd or an agent refused (`AuthenticationRejected`, `Rejected`).
    case rejected
    /// The pairing was cancelled (`AuthenticationCanceled`): the link went, or someone cancelled.
    case cancelled
    /// Nobody answered in time (`AuthenticationTimeout`, or the daemon's own bound).
    case timedOut
    /// Anything else bluetoothd answered.
    case other

    /// Retrying the same way cannot succeed: wait until someone changes something (the
    /// passkey) and asks again. A refusal is retried within the budget: bluetoothd also reports
    /// a busy controller as `AuthenticationRejected` (src/device.c `new_authentication_return`).
    public var needsOperator: Bool { self == .wrongKey }
}

extension FailureClass: CustomStringConvertible {
    /// The raw name, so a state written out (`suspended(gaveUp(pairing))`) reads as the logs and
    /// metrics name the class.
    public var description: String { rawValue }
}
