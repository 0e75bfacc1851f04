/// `[pairing]`: how the daemon's pairing agent answers bluetoothd (README, "Pairing").
public struct PairingSettings: Equatable, Sendable {
    /// The agent's IO capability, as `AgentManager1.RegisterAgent` takes it: what pairing
    /// methods SMP may choose. `NoInputNoOutput` (the default) is Just Works only; a device that
    /// displays a passkey and insists on MITM protection needs `KeyboardOnly` or
    /// `KeyboardDisplay` and its passkey in `passkeys_file`.
    public enum Capability: String, CaseIterable, Sendable {
        case noInputNoOutput = "NoInputNoOutput"
        case displayOnly = "DisplayOnly"
        case displayYesNo = "DisplayYesNo"
        case keyboardOnly = "KeyboardOnly"
        case keyboardDisplay = "KeyboardDisplay"
    }

    public var capability = Capability.noInputNoOutput
    /// The passkeys of devices that display one (`AA:BB:CC:DD:EE:FF 123456` per line): an
    /// absolute path, or the name of a credential (`LoadCredential=`). Never inline.
    public var passkeysFile: String?

    public init() {}
}
