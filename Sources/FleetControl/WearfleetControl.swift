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

    /// Error names the interface replies with.
    public enum ErrorName {
        /// `GetDevice` named a well-formed address the fleet does not know.
        public static let unknownDevice = "org.wearfleet.Error.UnknownDevice"
        /// `GetDevice` got something that is not `AA:BB:CC:DD:EE:FF`.
        public static let invalidAddress = "org.wearfleet.Error.InvalidAddress"
        /// `WatchValues` got a filter it cannot use (unknown key, mistyped value, bad address or
        /// UUID); the message names the key.
        public static let invalidFilter = "org.wearfleet.Error.InvalidFilter"
    }
}
