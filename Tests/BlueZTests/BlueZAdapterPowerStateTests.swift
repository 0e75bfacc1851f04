import BlueZ
import BluetoothVocabulary
import DBus
import Testing

/// BlueZ 5.66's `Adapter1.PowerState` announces a power-off ("on-disabling") before the kernel
/// ends the adapter's links and before `Powered` turns false: the mirror treats the adapter as off
/// from that moment.
struct BlueZAdapterPowerStateTests {
    static let adapterPath = BlueZObjectTreeTests.adapterPath

    @Test func poweringOffIsOffAtOnceAndATakenBackPowerOffIsOnAgain() throws {
        var tree = try BlueZObjectTree(managedObjects: BlueZObjectTreeTests.managedObjects())
        let disabling = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on-disabling")],
            invalidated: [])
        #expect(disabling == [.adapterPowerChanged(AdapterID("hci0"), powered: false)])
        // A power-off that failed: BlueZ sets PowerState back to "on" and `Powered` never moved.
        let restored = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on")], invalidated: [])
        #expect(restored == [.adapterPowerChanged(AdapterID("hci0"), powered: true)])
        for state in ["off", "off-enabling", "off-blocked"] {
            let events = try tree.apply(
                propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string(state)],
                invalidated: [])
            #expect(events == [.adapterPowerChanged(AdapterID("hci0"), powered: false)], "\(state)")
        }
    }

    @Test func aSnapshotTakenWhilePoweringOffCountsTheAdapterOff() throws {
        var tree = try BlueZObjectTree(managedObjects: BlueZObjectTreeTests.managedObjects())
        #expect(tree.adapters.first?.powered == true)
        _ = tree.propertiesChanged(
            Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on-disabling")], invalidated: [])
        #expect(tree.adapters.first?.powered == false, "Powered is still true, PowerState says it is going")
    }
}
