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
        for (name, expected) in BlueZErrorClassifier.nameTable where name != BlueZErrorClassifier.failedErrorName {
            #expect(BlueZErrorClassifier.classify(DeviceEvent.Failure(name: name)) == expected, "\(name)")
        }
        for (message, expected) in BlueZErrorClassifier.messageTable {
            #expect(BlueZErrorClassifier.classify(Self.failed(message)) == expected, "\(message)")
        }
    }
}
