import TOML

extension ConfigurationDecoder {
    // MARK: - [mqtt]

    mutating func decodeMQTT(_ section: ConfigSection, into mqtt: inout MQTTSettings) {
        rejectUnknownKeys(in: section, allowed: ConfigurationSchema.mqtt + ["password"])
        if let entry = section["password"] {
            report("'password' in [mqtt]: a password is never written in the configuration; put it in a file named by 'password_file' (or a LoadCredential= credential)", at: entry.keyPosition)
        }
        if let value = boolean(section, "enabled") { mqtt.enabled = value }
        if let (text, position) = string(section, "url") {
            if let (tls, host, port) = Self.brokerURL(text) {
                mqtt.tls = tls
                mqtt.host = host
                mqtt.port = port
            } else {
                report(
                    "'url' in [mqtt]: '\(text)' is not a broker URL (write mqtt://host:port or mqtts://host:port, e.g. \"mqtt://localhost:1883\")",
                    at: position)
            }
        }
        if let (text, position) = name(section, "client_id") {
            if text.utf8.count > 65_535 || text.utf8.contains(0) {
                report("'client_id' in [mqtt] must be at most 65535 bytes, without NUL", at: position)
            } else {
                mqtt.clientID = text
            }
        }
        if let (text, position) = string(section, "protocol") {
            if let version = MQTTSettings.ProtocolVersion(rawValue: text) {
                mqtt.protocolVersion = version
            } else {
                report("'protocol' in [mqtt] must be \"3.1.1\" or \"5\", found \"\(text)\"", at: position)
            }
        }
        if let (text, _) = name(section, "username") { mqtt.username = text }
        if let (text, position) = name(section, "password_file") {
            if text.contains("/") && !text.hasPrefix("/") {
                report("'password_file' in [mqtt] must be an absolute path or a credential name (LoadCredential=), found \"\(text)\"", at: position)
            } else {
                mqtt.passwordFile = text
            }
        }
        mqtt.caFile = existingFile(section, "ca_file", enabled: mqtt.enabled) ?? mqtt.caFile
        mqtt.certFile = existingFile(section, "cert_file", enabled: mqtt.enabled) ?? mqtt.certFile
        mqtt.keyFile = existingFile(section, "key_file", enabled: mqtt.enabled) ?? mqtt.keyFile
        if let (text, position) = name(section, "topic_prefix") {
            if Self.isTopicPath(text) { mqtt.topicPrefix = text } else { reportTopic("topic_prefix", text, at: position) }
        }
        if let (text, position) = name(section, "gateway_id") {
            if Self.isGatewayID(text) { mqtt.gatewayID = text } else { reportTopic("gateway_id", text, at: position, segment: true) }
        }
        if let value = boolean(section, "homeassistant_discovery") { mqtt.homeAssistantDiscovery = value }
        if let (text, position) = name(section, "discovery_prefix") {
            if Self.isTopicPath(text) { mqtt.discoveryPrefix = text } else { reportTopic("discovery_prefix", text, at: position) }
        }
        if let ops = strings(section, "allow_commands") {
            var allowed: Set<MQTTSettings.CommandOp> = []
            for (text, position) in ops {
                guard let op = MQTTSettings.CommandOp(rawValue: text) else {
                    let known = MQTTSettings.CommandOp.allCases.map(\.rawValue).joined(separator: ", ")
                    report("'allow_commands' in [mqtt]: unknown command \"\(text)\" (known: \(known))", at: position)
                    continue
                }
                if !allowed.insert(op).inserted {
                    report("'allow_commands' in [mqtt]: \"\(text)\" is listed twice", at: position)
                }
            }
            mqtt.allowCommands = allowed
        }
        // TLS files only mean something with TLS; a certificate needs its key and the reverse.
        let tlsKeys = ["ca_file", "cert_file", "key_file"].compactMap { key in section[key].map { (key, $0) } }
        if !mqtt.tls, let (key, entry) = tlsKeys.first {
            report("'\(key)' in [mqtt] needs a TLS url (mqtts://…), the url is \(mqtt.url)", at: entry.keyPosition)
        }
        if let cert = section["cert_file"], section["key_file"] == nil {
            report("'cert_file' in [mqtt] needs 'key_file' (the client certificate's private key)", at: cert.keyPosition)
        }
        if let key = section["key_file"], section["cert_file"] == nil {
            report("'key_file' in [mqtt] needs 'cert_file' (the client certificate)", at: key.keyPosition)
        }
        if let password = section["password_file"], section["username"] == nil {
            report("'password_file' in [mqtt] needs 'username'", at: password.keyPosition)
        }
    }

    /// An absolute path; with MQTT enabled, to a file that exists now (the client reads it when
    /// it connects).
    private mutating func existingFile(_ section: ConfigSection, _ key: String, enabled: Bool) -> String? {
        guard let (text, position) = name(section, key) else { return nil }
        guard text.hasPrefix("/") else {
            report("'\(key)' in [mqtt] must be an absolute path, found \"\(text)\"", at: position)
            return nil
        }
        guard enabled else { return text }
        switch PathKind(of: text) {
        case .other: return text
        case .directory: report("'\(key)' in [mqtt]: \(text) is a directory, not a file", at: position)
        case .missing: report("'\(key)' in [mqtt]: \(text) does not exist or cannot be read", at: position)
        }
        return nil
    }

    private mutating func reportTopic(_ key: String, _ text: String, at position: TOMLPosition, segment: Bool = false) {
        let rule = segment ? "one topic level: no '/', '+', '#' or NUL" : "topic levels without '+', '#', NUL or empty levels"
        report("'\(key)' in [mqtt] must be \(rule), found \"\(text)\"", at: position)
    }

    /// Topic levels usable in a published topic and under a subscription: no wildcards, no NUL,
    /// no empty level, no leading `$` (the broker's own topics).
    static func isTopicPath(_ text: String) -> Bool {
        guard !text.isEmpty, !text.hasPrefix("$"), text.utf8.count < 1024 else { return false }
        return !text.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" })
            && !text.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty)
    }

    /// A gateway id: one topic level, since it is a level of the gateway's topics and of the
    /// claims other gateways read (`[mqtt] gateway_id`, `[[pinned]] preferred_gateways`).
    static func isGatewayID(_ text: String) -> Bool {
        isTopicPath(text) && !text.contains("/")
    }

    /// `mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883); IPv6 hosts in brackets.
    static func brokerURL(_ text: String) -> (tls: Bool, host: String, port: Int)? {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            return nil
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else { return nil }
        let defaultPort = tls ? 8883 : 1883
        if let (host, port) = hostAndPort(String(authority)) { return (tls, host, port) }
        // No port: the scheme's default.
        if authority.hasPrefix("[") {
            guard authority.hasSuffix("]"), authority.count > 2 else { return nil }
            return (tls, String(authority.dropFirst().dropLast()), defaultPort)
        }
        guard !authority.contains(":") else { return nil }
        return (tls, String(authority), defaultPort)
    }
}
