/// `wearfleetctl device ADDRESS`: one device as `label: value` lines, labels aligned, missing
/// values shown as "-".
public enum DeviceDetails {
    public static func render(_ device: ControlDevice) -> [String] {
        var rows: [(String, String?)] = [
            ("Address", device.addressText),
            ("Name", device.name),
            ("Role", device.roleText),
            ("Class", device.className),
            ("State", device.stateText),
            ("Adapter", device.adapter),
            ("RSSI", device.rssiText),
            ("Last value", device.lastValue),
            ("Last value at", device.lastValueTimeText),
            ("Sessions", "\(device.sessions)"),
            ("Reconnects", "\(device.reconnects)"),
            ("Notifications", "\(device.notifications)"),
            ("Decode errors", "\(device.decodeErrors)"),
            ("Last error", device.lastError),
        ]
        // Only where several gateways share the fleet.
        if let owner = device.owner { rows.insert(("Owner", owner), at: 6) }
        let labelWidth = rows.map { $0.0.count }.max() ?? 0
        return rows.map { label, value in
            let text = value.map(TerminalText.sanitized) ?? TextTable.missing
            return TerminalText.padded(label + ":", toWidth: labelWidth + 1, alignment: .left) + " " + text
        }
    }
}
