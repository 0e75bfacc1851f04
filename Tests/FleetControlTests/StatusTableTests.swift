import Fleet
import FleetControl
import Testing

@Suite("wearfleetctl's status table and device details")
struct StatusTableTests {
    static var sample: ControlStatus {
        var status = SampleFleet.status.controlStatus(version: "9.8.7")
        status.devices = SampleFleet.status.controlDevices
        return status
    }

    @Test func theTableHasAHeaderTheAdaptersAndOneAlignedRowPerDevice() {
        let lines = StatusTable.render(Self.sample)
        #expect(lines == [
            "wearfleetd 9.8.7: 1/2 pinned ready, 0 pool, hci0 1/7 slots, hci1 off",
            "adapters: hci0 on, 1/7 slots, discovering; hci1 off",
            "",
            "ADDRESS                     NAME          ROLE    STATE                         ADAPTER  RSSI  LAST VALUE         RECONN  NOTIF  ERRORS",
            "AA:BB:CC:00:00:01           strap-1       pinned  ready                         hci0      -61  72 bpm, RR 812 ms       2   1234       1",
            "AA:BB:CC:00:00:02           -             pinned  backingOff #3, retry in 4.2s  -           -  -                       0      0       0",
            "AA:BB:CC:00:00:03 (random)  心拍センサー  pool    suspended: gaveUp(denied)     -           -  -                       0      0       0",
        ])
    }

    @Test func sharedWithOtherGatewaysTheTableShowsEachDevicesOwner() {
        var status = Self.sample
        status.devices[0].owner = "ward-3"
        status.devices[2].owner = "ward-4"
        let lines = StatusTable.render(status)
        #expect(lines[3].hasPrefix("ADDRESS                     NAME          ROLE    STATE                         ADAPTER  OWNER   RSSI"))
        #expect(lines[4].contains("ready                         hci0     ward-3   -61"))
        #expect(lines[5].contains("-        -          -"), "nobody owns it: a dash")
        #expect(lines[6].contains("gaveUp(denied)     -        ward-4"))
        #expect(Set(lines[3...].map(TerminalText.width)).count == 1, "every row as wide as the header")
        var one = Self.sample.devices[0]
        one.owner = "ward-3"
        #expect(DeviceDetails.render(one)[6] == "Owner:         ward-3")
    }

    @Test func longNamesAndValuesAreCutToTheirColumns() {
        var status = Self.sample
        status.devices[2].name = "心拍センサー・ベルト型モデル"  // 28 columns
        status.devices[0].lastValue = String(repeating: "x", count: 40)
        let lines = StatusTable.render(status)
        #expect(lines[4].contains(" " + String(repeating: "x", count: 27) + "… "))
        #expect(lines[6].contains("  心拍センサー・ベル…  pool"))
        #expect(Set(lines[3...].map(TerminalText.width)).count == 1, "every row as wide as the header")
    }

    @Test func anEmptyFleetSaysSo() {
        var status = Self.sample
        status.devices = []
        status.adapters = []
        let lines = StatusTable.render(status)
        #expect(lines.dropFirst() == ["adapters: none", "", "no devices"])
    }

    @Test("State texts say what comes next", arguments: [
        (ControlDevice(address: "A", pinned: true, state: "ready"), "ready"),
        (ControlDevice(address: "A", pinned: true, state: "degraded", stateReason: "writesFailing"), "degraded: writesFailing"),
        (ControlDevice(address: "A", pinned: true, state: "backingOff", retryAttempt: 2, nextAttemptIn: 0.01), "backingOff #2, retry now"),
        (ControlDevice(address: "A", pinned: true, state: "suspended", stateReason: "circuitOpen", nextAttemptIn: 25.4),
         "suspended: circuitOpen, retry in 25s"),
        (ControlDevice(address: "A", pinned: true, state: "suspended", stateReason: "budgetExhausted(transient)", nextAttemptIn: 600),
         "suspended: budgetExhausted(transient), retry in 10m"),
    ])
    func stateText(device: ControlDevice, text: String) {
        #expect(device.stateText == text)
    }

    @Test func deviceDetailsAlignLabelsAndShowMissingValuesAsDashes() {
        let lines = DeviceDetails.render(Self.sample.devices[1])
        #expect(lines == [
            "Address:       AA:BB:CC:00:00:02",
            "Name:          -",
            "Role:          pinned",
            "Class:         heart-rate",
            "State:         backingOff #3, retry in 4.2s",
            "Adapter:       -",
            "RSSI:          -",
            "Last value:    -",
            "Last value at: -",
            "Sessions:      5",
            "Reconnects:    0",
            "Notifications: 0",
            "Decode errors: 0",
            "Last error:    outOfSlots",
        ])
    }

    @Test func deviceDetailsDefuseAnUntrustedName() {
        var device = Self.sample.devices[0]
        device.name = "strap\u{1B}[31m\nred"
        #expect(DeviceDetails.render(device)[1] == "Name:          strap?[31m?red")
    }
}
