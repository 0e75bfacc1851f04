import TOML

extension ConfigurationDecoder {
    // MARK: - [pairing]

    mutating func decodePairing(_ section: ConfigSection, into pairing: inout PairingSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.pairing + ["passkey", "passkeys"])
        for key in ["passkey", "passkeys"] {
            if let entry = section[key] {
                report("'\(key)' in [pairing]: a passkey is never written in the configuration; list it in the file 'passkeys_file' names (or a LoadCredential= credential)", at: entry.keyPosition)
            }
        }
        if let (text, position) = string(section, "capability") {
            if let capability = PairingSettings.Capability(rawValue: text) {
                pairing.capability = capability
            } else {
                let known = PairingSettings.Capability.allCases.map(\.rawValue).joined(separator: ", ")
                report("'capability' in [pairing] must be one of \(known), found \"\(text.prefix(32))\"", at: position)
            }
        }
        if let (text, position) = name(section, "passkeys_file") {
            if text.contains("/") && !text.hasPrefix("/") {
                report("'passkeys_file' in [pairing] must be an absolute path or a credential name (LoadCredential=), found \"\(text)\"", at: position)
            } else {
                pairing.passkeysFile = text
            }
        }
    }
}
