import Testing
@testable import FleetCore

@Suite struct BlueZErrorClassifierTests {
    static func failed(_ message: String) -> DeviceEvent.Failure {
        DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: message)
    }

    @Test(arguments: [
        "le-connection-abort-by-local", "le-connection-abort-by-remote", "le-connection-timeout",
        "br-connection-canceled", "Software caused connection abort",
    ])
    func radioAndLinkLossIsTransient(message: String) {
        #expect(BlueZErrorClassifier.classify(Self.failed(message)) == .transient)
    }

    @Test func theConcurrentConnectionLimitMeansOutOfSlots() {
        #expect(BlueZErrorClassifier.classify(Self.failed("le-connection-concurrent-connection-limit")) == .outOfSlots)
    }

    @Test func anUnpoweredAdapterMeansBluetoothOff() {
        #expect(BlueZErrorClassifier.classify(Self.failed("le-connection-adapter-not-powered")) == .bluetoothOff)
        #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: "org.bluez.Error.NoSuchAdapter")) == .bluetoothOff)
    }

    @Test(arguments: [
        ("org.bluez.Error.InProgress", FailureClass.busy),
        ("org.bluez.Error.AlreadyConnected", .busy),
        ("org.bluez.Error.NotReady", .notReady),
        ("org.freedesktop.DBus.Error.ServiceUnknown", .notReady),
        ("org.bluez.Error.NotConnected", .transient),
        ("org.freedesktop.DBus.Error.NoReply", .transient),
        ("org.freedesktop.DBus.Error.Timeout", .transient),
        ("org.bluez.Error.DoesNotExist", .gone),
        ("org.freedesktop.DBus.Error.UnknownObject", .gone),
        ("org.bluez.Error.NotPermitted", .denied),
        ("org.bluez.Error.NotAuthorized", .denied),
        ("org.bluez.Error.AuthenticationFailed", .denied),
        ("org.bluez.Error.NotSupported", .protocol),
    ])
    func errorNamesMapToTheirClass(name: String, expected: FailureClass) {
        #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: name, message: "whatever text")) == expected)
    }

    @Test(arguments: [
        ("org.bluez.Reason.Timeout", FailureClass.transient),
        ("org.bluez.Reason.Remote", .transient),
        ("org.bluez.Reason.Local", .transient),
        ("org.bluez.Reason.Suspend", .transient),
        ("org.bluez.Reason.Authentication", .denied),
        ("org.bluez.Reason.Unknown", .unknown),
    ])
    func disconnectReasonsMapToTheirClass(reason: String, expected: FailureClass) {
        #expect(BlueZErrorClassifier.classifyDisconnect(DeviceEvent.Failure(name: reason)) == expected)
    }

    @Test func aDisconnectWithoutAReasonIsTransient() {
        #expect(BlueZErrorClassifier.classifyDisconnect(nil) == .transient)
    }

    @Test func anUnrecognisedFailedMessageIsUnknown() {
        #expect(BlueZErrorClassifier.classify(Self.failed("le-connection-something-new")) == .unknown)
    }

    @Test func anUnrecognisedErrorNameIsUnknown() {
        #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: "org.example.Error.Odd")) == .unknown)
    }

    @Test func messagesMatchWholeNotAsSubstrings() {
        #expect(BlueZErrorClassifier.classify(Self.failed("not le-connection-timeout at all")) == .unknown)
    }

    @Test func surroundingWhitespaceInAMessageIsIgnored() {
        #expect(BlueZErrorClassifier.classify(Self.failed("  le-connection-timeout\n")) == .transient)
    }

    @Test func errorNamesMatchCaseSensitively() {
        #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: "org.bluez.error.inprogress")) == .unknown)
    }

    @Test func theMessageDecidesOnlyForTheCatchAllFailedError() {
        let failure = DeviceEvent.Failure(name: "org.bluez.Error.InProgress", message: "le-connection-timeout")
        #expect(BlueZErrorClassifier.classify(failure) == .busy)
    }

    @Test func everyTableRowIsReachable() {
        for (name, kind) in BlueZErrorKind.byName where kind != .failed {
            let expected = BlueZErrorClassifier.failureClass(of: kind)
            #expect(expected != nil, "\(name): only Failed leaves the class to its message")
            #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: name)) == expected, "\(name)")
        }
        for (message, expected) in BlueZErrorClassifier.messageTable {
            #expect(BlueZErrorClassifier.classify(Self.failed(message)) == expected, "\(message)")
        }
    }

    /// Every kind, by name: the class it gets. A new kind fails here until it is given one.
    static let classOfEveryKind: [BlueZErrorKind: FailureClass?] = [
        .failed: nil,
        .inProgress: .busy, .alreadyConnected: .busy,
        .notReady: .notReady, .serviceUnavailable: .notReady,
        .notConnected: .transient, .connectionAttemptFailed: .transient, .authenticationTimeout: .transient,
        .timeout: .transient,
        .notPermitted: .denied, .notAuthorized: .denied, .authenticationFailed: .denied,
        .authenticationRejected: .denied, .authenticationCanceled: .denied,
        .doesNotExist: .gone, .unknownObject: .gone,
        .noSuchAdapter: .bluetoothOff,
        .notSupported: .protocol,
        .disconnectedByTimeout: .transient, .disconnectedByRemote: .transient, .disconnectedByLocal: .transient,
        .disconnectedForSuspend: .transient, .disconnectedForAuthentication: .denied,
        .disconnectedForUnknownReason: .unknown,
        .invalidArguments: .unknown, .invalidValueLength: .unknown, .invalidOffset: .unknown, .alreadyExists: .unknown,
        .busDisconnected: .unknown, .other: .unknown,
    ]

    @Test func everyKindHasItsClass() {
        for kind in BlueZErrorKind.allCases {
            let expected = Self.classOfEveryKind[kind]
            #expect(expected != nil, "\(kind) is missing from this test's table")
            #expect(BlueZErrorClassifier.failureClass(of: kind) == expected ?? nil, "\(kind)")
            // The same class through a failure as BlueZ reports it, under the kind's own name.
            let viaName = BlueZErrorClassifier.classify(DeviceEvent.Failure(name: kind.dbusName, message: "le-connection-busy"))
            #expect(viaName == (expected ?? nil) ?? .busy, "\(kind): only Failed asks its message")
        }
    }

    @Test func aFailureReportedByKindCarriesTheKindsOwnName() {
        let failure = DeviceEvent.Failure(.doesNotExist, message: "characteristic gone")
        #expect(failure == DeviceEvent.Failure(name: "org.bluez.Error.DoesNotExist", message: "characteristic gone"))
        #expect(BlueZErrorClassifier.classify(failure) == .gone)
    }

    @Test func pairingFailuresAreClassifiedByBluetoothdsAnswer() {
        let cases: [(String, PairingFailure)] = [
            ("org.bluez.Error.AuthenticationFailed", .wrongKey),
            ("org.bluez.Error.AuthenticationRejected", .rejected),
            ("org.bluez.Error.Rejected", .rejected),
            ("org.bluez.Error.AuthenticationCanceled", .cancelled),
            ("org.bluez.Error.AuthenticationTimeout", .timedOut),
            ("org.freedesktop.DBus.Error.NoReply", .timedOut),
            ("org.bluez.Error.Failed", .other),
            ("org.bluez.Error.ConnectionAttemptFailed", .other),
        ]
        for (name, expected) in cases {
            #expect(BlueZErrorClassifier.classifyPairing(DeviceEvent.Failure(name: name, message: "x")) == expected, "\(name)")
        }
        #expect(PairingFailure.allCases.filter(\.needsOperator) == [.wrongKey])
    }

    @Test func requestsThatNeedABondedLinkAreRecognisedByTheirExactText() {
        for text in ["Not paired", "Operation failed with ATT error: 0x05", "Operation failed with ATT error: 0x0f",
                     "Operation failed with ATT error: 0x0c", "  Not paired "] {
            let name = text.contains("paired") ? "org.bluez.Error.NotPermitted" : "org.bluez.Error.Failed"
            #expect(BlueZErrorClassifier.needsEncryption(DeviceEvent.Failure(name: name, message: text)), "\(text)")
        }
        for (name, text) in [
            ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e"), ("org.bluez.Error.NotPermitted", "Read not permitted"),
            ("org.bluez.Error.NotSupported", "Not paired"), ("org.bluez.Error.Failed", "le-connection-abort-by-local"),
        ] {
            #expect(!BlueZErrorClassifier.needsEncryption(DeviceEvent.Failure(name: name, message: text)), "\(name): \(text)")
        }
    }
}
