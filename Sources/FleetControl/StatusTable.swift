/// `wearfleetctl status`: the fleet as lines of text.
///
/// A header (the daemon's summary, which names an absent bluetoothd, then its adapters), a
/// blank line, then one row per device: address, name, role, state, adapter, RSSI, last value,
/// reconnects (`RECONN`), values received (`NOTIF`) and values that did not decode (`ERRORS`);
/// when several gateways share the fleet (some device has an owner), the owning gateway
/// (`OWNER`) after the adapter. Pure, so tests check alignment, missing values and untrusted names directly.
public enum StatusTable {
    static let table = TextTable(columns(owner: false))
    static let clusterTable = TextTable(columns(owner: true))

    static func columns(owner: Bool) -> [TextTable.Column] {
        var columns: [TextTable.Column] = [
            .init("ADDRESS"),
            .init("NAME", maxWidth: 20),
            .init("ROLE"),
            .init("STATE", maxWidth: 40),
            .init("ADAPTER"),
        ]
        if owner { columns.append(.init("OWNER", maxWidth: 24)) }
        return columns + [
            .init("RSSI", alignment: .right),
        .init("LAST VALUE", maxWidth: 28),
        .init("RECONN", alignment: .right),
        .init("NOTIF", alignment: .right),
            .init("ERRORS", alignment: .right),
        ]
    }

    public static func render(_ status: ControlStatus) -> [String] {
        var lines = [
            "wearfleetd \(TerminalText.sanitized(status.version)): \(TerminalText.sanitized(status.summary))",
            "adapters: " + adaptersText(status.adapters),
        ]
        lines.append("")
        guard !status.devices.isEmpty else {
            lines.append("no devices")
            return lines
        }
        let showsOwner = status.devices.contains { $0.owner != nil }
        lines += (showsOwner ? clusterTable : table).render(status.devices.map { device in
            [device.addressText, device.name, device.roleText, device.stateText, device.adapter]
                + (showsOwner ? [device.owner] : [])
                + [
                    device.rssi.map { "\($0)" }, device.lastValue, "\(device.reconnects)", "\(device.notifications)",
                    "\(device.decodeErrors)",
                ]
        })
        return lines
    }

    /// `hci0 on, 3/5 slots, discovering; hci1 off`, or `none`.
    static func adaptersText(_ adapters: [ControlAdapter]) -> String {
        guard !adapters.isEmpty else { return "none" }
        return adapters.map { adapter in
            let name = TerminalText.sanitized(adapter.id)
            guard adapter.powered else { return "\(name) off" }
            return "\(name) on, \(adapter.used)/\(adapter.slots) slots" + (adapter.discovering ? ", discovering" : "")
        }.joined(separator: "; ")
    }
}
