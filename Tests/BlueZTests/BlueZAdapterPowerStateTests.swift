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

    /// A signal may carry both: the event is the adapter as the mirror has it afterwards.
    @Test func bothPropertiesInOneSignalGiveOneEventThatAgreesWithTheMirror() throws {
        var tree = try BlueZObjectTree(managedObjects: BlueZObjectTreeTests.managedObjects())
        let enabling = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1",
            changed: ["Powered": .boolean(true), "PowerState": .string("off-enabling")], invalidated: [])
        #expect(enabling == [.adapterPowerChanged(AdapterID("hci0"), powered: false)])
        #expect(tree.adapters.first?.powered == false)
        // A power-off bluetoothd did not ask for (btmgmt): `Powered` false, `PowerState` still "on".
        _ = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on")], invalidated: [])
        let stopped = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1",
            changed: ["Powered": .boolean(false), "PowerState": .string("on")], invalidated: [])
        #expect(stopped == [.adapterPowerChanged(AdapterID("hci0"), powered: false)])
    }

    @Test func aSnapshotTakenWhilePoweringOffCountsTheAdapterOff() throws {
        var tree = try BlueZObjectTree(managedObjects: BlueZObjectTreeTests.managedObjects())
        #expect(tree.adapters.first?.powered == true)
        _ = tree.propertiesChanged(
            Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on-disabling")], invalidated: [])
        #expect(tree.adapters.first?.powered == false, "Powered is still true, PowerState says it is going")
    }
}
