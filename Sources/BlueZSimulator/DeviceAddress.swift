import DeterministicRandom
import Foundation

/// Bluetooth device addresses: validation, generation and BlueZ's object path element.
enum DeviceAddress {
    /// `aa:bb:…` or `AA-BB-…` as BlueZ prints it (`AA:BB:CC:DD:EE:FF`); throws for anything else.
    static func normalized(_ text: String) throws -> String {
        let parts = text.uppercased().split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw ScenarioError.invalid("address", "'\(text)' is not a Bluetooth address")
        }
        return parts.joined(separator: ":")
    }

    /// A plausible address: a public one from a fixed vendor-like prefix, or a random static one
    /// (the two top bits set, as the Core specification requires).
    static func generated(public isPublic: Bool, using random: inout SeededRandom) -> String {
        var bytes = (0..<6).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if isPublic {
            bytes[0] = 0x00
            bytes[1] = 0x1A
            bytes[2] = 0x7D
        } else {
            bytes[0] |= 0xC0
        }
        return bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// `dev_AA_BB_CC_DD_EE_FF`.
    static func pathElement(_ address: String) -> String {
        "dev_" + address.replacingOccurrences(of: ":", with: "_")
    }
}
