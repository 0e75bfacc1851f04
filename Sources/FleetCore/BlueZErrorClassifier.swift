// Classification lives in tables, not in `if message.contains(...)` chains scattered through the
// code: a BlueZ error name is parsed once into a `BlueZErrorKind` (the one table of names), each
// kind has one class here, and the catch-all `org.bluez.Error.Failed` has one table of texts.
// The tests walk every kind and every text.

/// Maps BlueZ failures and disconnect reasons to a `FailureClass`.
///
/// Pure and total: every failure gets a class, and anything not recognised is `.unknown`. The
/// kind decides (`failureClass(of:)`, a switch the compiler checks covers every kind), except for
/// `org.bluez.Error.Failed`, whose message decides: BlueZ's `le-connection-*` /
/// `br-connection-*` texts and a few kernel errno texts match exactly after trimming
/// surrounding whitespace.
public enum BlueZErrorClassifier {
    /// Classifies a failure as BlueZ reported it.
    public static func classify(_ failure: DeviceEvent.Failure) -> FailureClass {
        failureClass(of: failure.kind) ?? messageTable[trimmed(failure.message)] ?? .unknown
    }

    /// Classifies a link loss. `nil` is a disconnect from a BlueZ older than 5.83, which only
    /// flips `Device1.Connected` and says nothing about why: the common cause is radio loss.
    public static func classifyDisconnect(_ reason: DeviceEvent.Failure?) -> FailureClass {
        guard let reason else { return .transient }
        return classify(reason)
    }

    /// Which way a bonding failed: what `pairing` failures are counted and logged by.
    public static func classifyPairing(_ failure: DeviceEvent.Failure) -> PairingFailure {
        switch failure.kind {
        // SMP's Confirm Value Failed (a wrong passkey) and every other authentication failure
        // the kernel reports come back as AuthenticationFailed (src/device.c
        // `new_authentication_return`).
        case .authenticationFailed: .wrongKey
        case .authenticationRejected, .notAuthorized, .notPermitted: .rejected
        case .authenticationCanceled: .cancelled
        case .authenticationTimeout, .timeout: .timedOut
        default: failure.name == "org.bluez.Error.Rejected" ? .rejected : .other
        }
    }

    /// Whether a failed read, write or subscription says the link must be encrypted (bonded)
    /// first: bluetoothd words the ATT errors Insufficient Authentication (0x05), Insufficient
    /// Encryption (0x0f) and Insufficient Encryption Key Size (0x0c) this way when raising the
    /// link's security itself did not get the request through (src/gatt-client.c).
    public static func needsEncryption(_ failure: DeviceEvent.Failure) -> Bool {
        if failure.kind == .notPermitted || failure.kind == .notAuthorized {
            return encryptionMessages.contains(trimmed(failure.message))
        }
        guard failure.kind == .failed else { return false }
        return encryptionMessages.contains(trimmed(failure.message))
    }

    /// The texts bluetoothd gives a request that needs a bonded (encrypted) link.
    static let encryptionMessages: Set<String> = [
        "Not paired",
        "Operation failed with ATT error: 0x05",
        "Operation failed with ATT error: 0x0f",
        "Operation failed with ATT error: 0x0c",
    ]

    // MARK: - Tables

    /// The class of each kind; nil for `.failed`, whose message decides (`messageTable`).
    public static func failureClass(of kind: BlueZErrorKind) -> FailureClass? {
        switch kind {
        case .failed: nil
        case .inProgress, .alreadyConnected: .busy
        // bluetoothd is not on the bus (yet, or any more), or not ready.
        case .notReady, .serviceUnavailable: .notReady
        case .notConnected, .connectionAttemptFailed: .transient
        case .notPermitted, .notAuthorized, .authenticationFailed, .authenticationRejected, .authenticationCanceled: .denied
        // A pairing agent that did not answer in time: the device may well accept next time.
        case .authenticationTimeout: .transient
        case .doesNotExist, .unknownObject: .gone
        case .noSuchAdapter: .bluetoothOff
        // The device lacks a feature we asked for (e.g. notify on a characteristic without it).
        case .notSupported: .protocol
        case .timeout: .transient
        // Device1.Disconnected reasons (BlueZ >= 5.83).
        case .disconnectedByTimeout, .disconnectedByRemote, .disconnectedByLocal, .disconnectedForSuspend: .transient
        case .disconnectedForAuthentication: .denied
        case .disconnectedForUnknownReason: .unknown
        // Our own calls' mistakes and a lost bus say nothing about the device; nor does
        // `ConnectDevice` finding that the adapter already holds an object for it.
        case .invalidArguments, .invalidValueLength, .invalidOffset, .alreadyExists, .busDisconnected, .other: .unknown
        }
    }

    /// Exact messages of `org.bluez.Error.Failed` (BlueZ's connection error strings, and the
    /// strerror texts older code paths pass through).
    static let messageTable: [String: FailureClass] = [
        "le-connection-abort-by-local": .transient,
        "le-connection-abort-by-remote": .transient,
        "le-connection-timeout": .transient,
        "le-connection-refused": .transient,
        "le-connection-link-layer-protocol-error": .transient,
        "le-connection-concurrent-connection-limit": .outOfSlots,
        "le-connection-adapter-not-powered": .bluetoothOff,
        "le-connection-busy": .busy,
        "le-connection-already-connected": .busy,
        "le-connection-gatt-browsing": .protocol,
        "le-connection-key-missing": .denied,
        "br-connection-canceled": .transient,
        "br-connection-aborted-by-local": .transient,
        "br-connection-aborted-by-remote": .transient,
        "br-connection-timeout": .transient,
        "br-connection-page-timeout": .transient,
        "br-connection-refused": .transient,
        "br-connection-concurrent-connection-limit": .outOfSlots,
        "br-connection-adapter-not-powered": .bluetoothOff,
        "br-connection-busy": .busy,
        "br-connection-key-missing": .denied,
        "Software caused connection abort": .transient,
        "Connection timed out": .transient,
        "Host is down": .transient,
        "Operation already in progress": .busy,
        "Resource temporarily unavailable": .busy,
    ]

    private static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
              let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}
