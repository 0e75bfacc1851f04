import Foundation
import Testing
@testable import FleetConfiguration

@Suite struct ConfigMQTTTests {
    @Test func defaultsAreOffWithTheDocumentedPrefixes() throws {
        let mqtt = try #require(validConfiguration("")).mqtt
        #expect(!mqtt.enabled)
        #expect(mqtt.url == "mqtt://localhost:1883")
        #expect(mqtt.topicPrefix == "wearfleet" && mqtt.discoveryPrefix == "homeassistant")
        #expect(mqtt.homeAssistantDiscovery && mqtt.allowCommands.isEmpty && mqtt.gatewayID == nil && mqtt.clientID == nil)
        #expect(mqtt.protocolVersion == .v311)
    }

    @Test func everyKeyIsApplied() throws {
        let mqtt = try #require(validConfiguration("""
            [mqtt]
            enabled = true
            url = "mqtts://[::1]"
            client_id = "gw"
            protocol = "5"
            username = "u"
            password_file = "mqtt-password"
            ca_file = "/etc/hostname"
            topic_prefix = "site/ward3"
            gateway_id = "box-7"
            homeassistant_discovery = false
            discovery_prefix = "ha"
            allow_commands = ["write", "pin"]
            """)).mqtt
        #expect(mqtt.enabled && mqtt.tls && mqtt.host == "::1" && mqtt.port == 8883)
        #expect(mqtt.clientID == "gw" && mqtt.protocolVersion == .v5 && mqtt.username == "u" && mqtt.passwordFile == "mqtt-password")
        #expect(mqtt.caFile == "/etc/hostname" && mqtt.topicPrefix == "site/ward3" && mqtt.gatewayID == "box-7")
        #expect(!mqtt.homeAssistantDiscovery && mqtt.discoveryPrefix == "ha" && mqtt.allowCommands == [.write, .pin])
    }

    @Test(arguments: [
        ("url = \"http://x:1\"", "main.toml:2: 'url' in [mqtt]: 'http://x:1' is not a broker URL (write mqtt://host:port or mqtts://host:port, e.g. \"mqtt://localhost:1883\")"),
        ("url = \"mqtt://x:99999\"", "main.toml:2: 'url' in [mqtt]: 'mqtt://x:99999' is not a broker URL (write mqtt://host:port or mqtts://host:port, e.g. \"mqtt://localhost:1883\")"),
        ("protocol = \"4\"", "main.toml:2: 'protocol' in [mqtt] must be \"3.1.1\" or \"5\", found \"4\""),
        ("password = \"hunter2\"", "main.toml:2: 'password' in [mqtt]: a password is never written in the configuration; put it in a file named by 'password_file' (or a LoadCredential= credential)"),
        ("username = \"u\"\npassword_file = \"a/b\"", "main.toml:3: 'password_file' in [mqtt] must be an absolute path or a credential name (LoadCredential=), found \"a/b\""),
        ("password_file = \"/p\"", "main.toml:2: 'password_file' in [mqtt] needs 'username'"),
        ("ca_file = \"/etc/hostname\"", "main.toml:2: 'ca_file' in [mqtt] needs a TLS url (mqtts://…), the url is mqtt://localhost:1883"),
        ("url = \"mqtts://b\"\ncert_file = \"/etc/hostname\"", "main.toml:3: 'cert_file' in [mqtt] needs 'key_file' (the client certificate's private key)"),
        ("enabled = true\nurl = \"mqtts://b\"\nca_file = \"/nonexistent/ca.pem\"", "main.toml:4: 'ca_file' in [mqtt]: /nonexistent/ca.pem does not exist or cannot be read"),
        ("url = \"mqtts://b\"\nca_file = \"ca.pem\"", "main.toml:3: 'ca_file' in [mqtt] must be an absolute path, found \"ca.pem\""),
        ("topic_prefix = \"a/+/b\"", "main.toml:2: 'topic_prefix' in [mqtt] must be topic levels without '+', '#', NUL or empty levels, found \"a/+/b\""),
        ("topic_prefix = \"a//b\"", "main.toml:2: 'topic_prefix' in [mqtt] must be topic levels without '+', '#', NUL or empty levels, found \"a//b\""),
        ("gateway_id = \"a/b\"", "main.toml:2: 'gateway_id' in [mqtt] must be one topic level: no '/', '+', '#' or NUL, found \"a/b\""),
        ("discovery_prefix = \"#\"", "main.toml:2: 'discovery_prefix' in [mqtt] must be topic levels without '+', '#', NUL or empty levels, found \"#\""),
        ("allow_commands = [\"write\", \"format\"]", "main.toml:2: 'allow_commands' in [mqtt]: unknown command \"format\" (known: write, read, disconnect, reconnect, pin, unpin, subscribe, unsubscribe, nearby, pair, unpair)"),
        ("allow_commands = [\"pin\", \"pin\"]", "main.toml:2: 'allow_commands' in [mqtt]: \"pin\" is listed twice"),
        ("client_id = \"\"", "main.toml:2: 'client_id' in [mqtt] must not be empty"),
        ("enabled = \"yes\"", "main.toml:2: 'enabled' in [mqtt] must be a boolean (true or false), found a string"),
    ])
    func reports(_ body: String, _ expected: String) {
        #expect(configurationErrors("[mqtt]\n" + body) == [expected])
    }

    @Test func anUnknownKeySuggestsTheRightOne() {
        #expect(configurationErrors("[mqtt]\ntopic_prefx = \"x\"") == ["main.toml:2: unknown key 'topic_prefx' in [mqtt] (did you mean 'topic_prefix'?)"])
    }

    @Test func brokerURLs() {
        #expect(ConfigurationDecoder.brokerURL("mqtt://localhost")! == (false, "localhost", 1883))
        #expect(ConfigurationDecoder.brokerURL("mqtts://b.example:8884/")! == (true, "b.example", 8884))
        #expect(ConfigurationDecoder.brokerURL("mqtt://[fe80::1]:1884")! == (false, "fe80::1", 1884))
        #expect(ConfigurationDecoder.brokerURL("mqtt://u:p@host:1") == nil)
        #expect(ConfigurationDecoder.brokerURL("mqtt://") == nil)
        #expect(ConfigurationDecoder.brokerURL("mqtt://host/path") == nil)
    }
}
