import BlueZ
import FleetCore

extension BlueZObjectTree {
    /// The object through which the runtime reaches `device`: with an adapter named, that
    /// adapter's object (nil when it holds none, so a link through hci1 never borrows hci0's
    /// object); without one, the connected object, else the first in path order.
    ///
    /// Device operations do not name the adapter yet (`DeviceTransport`'s calls carry only the
    /// device), so they pass nil and get the connected object; a later change passes the link's
    /// adapter.
    func deviceObject(_ device: DeviceID, on adapter: AdapterID?) -> BlueZDevice? {
        if let adapter { return self.device(device, on: adapter) }
        let objects = devices(device)
        return objects.first(where: \.connected) ?? objects.first
    }
}
