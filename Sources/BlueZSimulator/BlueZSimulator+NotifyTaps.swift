import DBus

// Taps: a copy of every datagram the simulator sends on AcquireNotify sockets, for a benchmark's
// floor receiver. BlueZ has nothing like it (a characteristic has one acquisition at a time), so
// a minimal receiver could otherwise only take the sockets when the client under test has let
// them go, in another window. Through a tap it takes the very datagrams that client takes, from
// the same sending thread at the same instants, in the same window: the fd path's floor measured
// the way the D-Bus path's floor is (on the same signals, beside the daemon).

extension BlueZSimulator {
    /// One new socket for each characteristic of `address` that holds an AcquireNotify socket
    /// now: from here on each datagram sent on that socket is sent on the tap as well, right
    /// before or right after it, by turns (`NotifySocket.send`). A tap ends with its acquisition
    /// (closed as the acquired socket closes), when its reader closes it, or when it is tapped
    /// again. Datagrams a full tap cannot take are dropped for it alone.
    ///
    /// One device per call: a bus limits the descriptors one message may carry (dbus-daemon
    /// disconnects the sender of a message over the limit), and a device has a few notifying
    /// characteristics where a fleet has hundreds.
    public func tapNotifySockets(of address: String) throws -> [DBusFileDescriptor] {
        guard let characteristics = devices[address]?.characteristics else {
            throw DBusError(name: DBusError.invalidArgs, message: "unknown device \(address)")
        }
        return try characteristics.values.compactMap { characteristic -> DBusFileDescriptor? in
            guard let socket = characteristic.notifySocket else { return nil }
            let (local, remote) = try SeqPacketPair.make()
            socket.setTap(NotifySocket(fd: local))
            return DBusFileDescriptor(owning: remote)
        }
    }
}
