import FleetCore

/// The passkeys of devices that display one, from `[pairing] passkeys_file`: one
/// `AA:BB:CC:DD:EE:FF 123456` per line (six digits, 0 to 999999), `#` comments and blank lines
/// ignored. A problem names its `file:line` and never the passkey: the file is a secret.
public struct PairingPasskeys: Sendable, Equatable {
    public private(set) var byAddress: [BluetoothAddress: UInt32] = [:]

    public init(_ byAddress: [BluetoothAddress: UInt32] = [:]) {
        self.byAddress = byAddress
    }

    public func passkey(for address: BluetoothAddress) -> UInt32? { byAddress[address] }

    public var count: Int { byAddress.count }

    /// The passkeys in `text` (read from `file`), and a `file:line: …` line per problem; lines
    /// with a problem are left out, the others kept.
    public static func parse(_ text: String, file: String) -> (passkeys: PairingPasskeys, problems: [String]) {
        var passkeys = PairingPasskeys()
        var problems: [String] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            let at = "\(file):\(index + 1)"
            guard fields.count == 2 else {
                problems.append("\(at): expected 'AA:BB:CC:DD:EE:FF PASSKEY', found \(fields.count) fields")
                continue
            }
            guard let address = BluetoothAddress(String(fields[0])) else {
                problems.append("\(at): '\(fields[0].prefix(32))' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
                continue
            }
            guard fields[1].count <= 6, fields[1].allSatisfy(\.isASCIIDigit), let passkey = UInt32(fields[1]) else {
                problems.append("\(at): the passkey of \(address) is not six digits (0 to 999999)")
                continue
            }
            if passkeys.byAddress.updateValue(passkey, forKey: address) != nil {
                problems.append("\(at): \(address) is listed twice (the later passkey is used)")
            }
        }
        return (passkeys, problems)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
