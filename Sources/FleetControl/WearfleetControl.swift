// The fixed names of the daemon's control interface. The D-Bus policy file
// (systemd/org.wearfleet.Daemon.conf), the systemd unit and wearfleetctl all depend on them:
// they are part of the interface and never change within `Daemon1`.

import DBus

/// Names of the control interface wearfleetd exports on the system bus.
public enum WearfleetControl {
    /// The daemon's well-known bus name.
    public static let busName = "org.wearfleet.Daemon"
    /// The one object the daemon exports.
    public static let objectPath: DBusObjectPath = "/org/wearfleet/Daemon"
    /// The interface; a change that is not backwards compatible gets a new number.
    public static let interfaceName = "org.wearfleet.Daemon1"

    /// The group whose members (with root) may call the commands (`Pin`, `Write`, …); created by
    /// sysusers (`wearfleet.sysusers.conf`) and named in the bus policy.
    public static let adminGroup = "wearfleet-admin"

    /// Error names the interface replies with (README, "The control interface", lists them).
    /// A refused command changes nothing.
    public enum ErrorName {
        // MARK: Commands
        /// A UUID argument is not a Bluetooth UUID (16-, 32- or 128-bit form).
        public static let invalidUUID = "org.wearfleet.Error.InvalidUUID"
        /// An `a{sv}` option is unknown, mistyped or out of range.
        public static let invalidOption = "org.wearfleet.Error.InvalidOption"
        /// `Pin` named a class the configuration does not define.
        public static let unknownClass = "org.wearfleet.Error.UnknownClass"
        /// `Pin` of a device already pinned at run time.
        public static let alreadyPinned = "org.wearfleet.Error.AlreadyPinned"
        /// `Pin`/`Unpin` of a device the configuration file pins; the message names `file:line`.
        public static let pinnedByConfiguration = "org.wearfleet.Error.PinnedByConfiguration"
        /// `Unpin` of a device that is not pinned at run time.
        public static let notPinned = "org.wearfleet.Error.NotPinned"
        /// `Read`/`Write` to a device with no usable link now.
        public static let notConnected = "org.wearfleet.Error.NotConnected"
        /// The device shows no such characteristic.
        public static let unknownCharacteristic = "org.wearfleet.Error.UnknownCharacteristic"
        /// The characteristic lacks the property the operation needs (read, write, write without response).
        public static let notSupported = "org.wearfleet.Error.NotSupported"
        /// The value is longer than a write may be.
        public static let tooLarge = "org.wearfleet.Error.TooLarge"
        /// The device's write queue for that QoS is full: slow down.
        public static let queueFull = "org.wearfleet.Error.QueueFull"
        /// The write was queued, then dropped unsent (link lost, device removed).
        public static let notSent = "org.wearfleet.Error.NotSent"
        /// The write was still queued when the daemon stopped waiting; taken back, never sent.
        public static let timedOut = "org.wearfleet.Error.Timeout"
        /// A newer `replace` write took the queued write's place: never sent.
        public static let replaced = "org.wearfleet.Error.Replaced"
        /// `Subscribe` to a characteristic the device is subscribed to already.
        public static let alreadySubscribed = "org.wearfleet.Error.AlreadySubscribed"
        /// `Unsubscribe` from a characteristic the device is not subscribed to.
        public static let notSubscribed = "org.wearfleet.Error.NotSubscribed"
        /// bluetoothd or the device refused or failed the operation; the message has BlueZ's error.
        public static let bluetoothFailed = "org.wearfleet.Error.BluetoothFailed"
        /// A pin change is in effect for this run but could not be saved.
        public static let notSaved = "org.wearfleet.Error.NotSaved"

        // MARK: Reading
        /// `GetDevice` named a well-formed address the fleet does not know.
        public static let unknownDevice = "org.wearfleet.Error.UnknownDevice"
        /// `GetDevice` got something that is not `AA:BB:CC:DD:EE:FF`.
        public static let invalidAddress = "org.wearfleet.Error.InvalidAddress"
        /// `WatchValues` got a filter it cannot use (unknown key, mistyped value, bad address or
        /// UUID); the message names the key.
        public static let invalidFilter = "org.wearfleet.Error.InvalidFilter"
        /// `WatchValues` while `WatchHub.clientLimit` clients watch already.
        public static let tooManyWatchers = "org.wearfleet.Error.TooManyWatchers"
        /// `Pin` while `FleetStateMachine.runtimePinLimit` devices are pinned at run time.
        public static let tooManyPins = "org.wearfleet.Error.TooManyPins"
    }
}
