/// How a simulated wearable pairs, as SMP between its IO capabilities and the host's decides.
public enum PairingMethod: String, Codable, Sendable, Hashable, CaseIterable {
    /// Just Works: no agent is asked (a scale, a thermometer).
    case justWorks
    /// The device displays a passkey the host must enter, and insists on MITM protection (a
    /// blood-pressure cuff): bluetoothd asks the agent `RequestPasskey`; a host that cannot
    /// enter one (no agent, or an agent of capability `NoInputNoOutput`, `DisplayOnly` or
    /// `DisplayYesNo`) fails to pair.
    case passkey
}
