import BlueZ
import FleetCore

extension BlueZObjectTree {
    /// The object through which the runtime reaches `device`: with an adapter named, that
    /// adapter's object (nil when it holds none, so a link through hci1 never borrows hci0's
    /// object); without one, the connected object, else the first in path order.
    ///
    /// Operations on a link name its adapter (the device actor passes the machine's link
    /// adapter); nil is left for callers that know no link, such as a retired device's or the
    /// stopping fleet's disconnect.
    func deviceObject(_ device: DeviceID, on adapter: AdapterID?) -> BlueZDevice? {
        if let adapter { return self.device(device, on: adapter) }
        let objects = devices(device)
        return objects.first(where: \.connected) ?? objects.first
    }
}
