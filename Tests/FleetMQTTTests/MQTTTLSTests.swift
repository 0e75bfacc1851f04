import Fleet
import FleetCore
@testable import FleetMQTT
import FleetConfiguration
import Foundation
import Logging
import ProcessSupport
import Testing
import TestSupport

/// TLS with a CA made for the test (openssl) and a password file, against a private mosquitto
/// that requires both.
@Suite(.serialized) struct MQTTTLSTests {
    /// A CA, and a server certificate for `localhost` signed by it, in `directory`.
    static func makeCertificates(in directory: URL) throws {
        func openssl(_ arguments: [String]) throws {
            let (status, output) = try ChildProcess.run("/usr/bin/openssl", arguments)
            guard status == 0 else { throw ChildProcessError.noOutput("openssl", "failed: \(output)") }
        }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Wearfleet test CA",
                     "-keyout", path("ca.key"), "-out", path("ca.pem")])
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", path("server.key"), "-out", path("server.csr")])
        try "subjectAltName=DNS:localhost\n".write(toFile: path("san.ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
                     "-days", "1", "-extfile", path("san.ext"), "-out", path("server.pem")])
    }

    static func broker(in directory: URL) throws -> PrivateBroker {
        try makeCertificates(in: directory)
        let passwords = directory.appendingPathComponent("passwords").path
        _ = FileManager.default.createFile(atPath: passwords, contents: nil)
        let (status, output) = try ChildProcess.run("/usr/bin/mosquitto_passwd", ["-b", passwords, "wearfleet", "s3cret word"])
        guard status == 0 else { throw ChildProcessError.noOutput("mosquitto_passwd", output) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        return try PrivateBroker(configuration: """
            allow_anonymous false
            password_file \(passwords)
            cafile \(path("ca.pem"))
            certfile \(path("server.pem"))
            keyfile \(path("server.key"))
            """)
    }

    @Test func theDaemonsSettingsConnectOverTLSWithThePasswordFromItsCredential() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try Self.broker(in: directory)
        // The unit's LoadCredential= puts the password in $CREDENTIALS_DIRECTORY/mqtt-password.
        let credentials = directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        try "s3cret word\n".write(to: credentials.appendingPathComponent("mqtt-password"), atomically: true, encoding: .utf8)

        let configuration = try ConfigurationLoader.decode([ConfigurationSource(file: "t.toml", text: """
            [mqtt]
            enabled = true
            url = "mqtts://localhost:\(broker.port)"
            username = "wearfleet"
            password_file = "mqtt-password"
            ca_file = "\(directory.appendingPathComponent("ca.pem").path)"
            gateway_id = "tls"
            """)]).get()
        let (settings, topics) = try MQTTOutlet.connectionSettings(
            configuration.mqtt, environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        #expect(settings.password == "s3cret word" && settings.tls && settings.clientID == "wearfleet-tls")

        let client = try MQTTClient(settings: settings, random: SeededRandom(seed: 9), logger: Logger(label: "test"))
        _ = try await client.events.first(within: .seconds(10), "the TLS connection") { $0 == .connected }
        await client.stop(final: MQTTMessage(topic: topics.gatewayStatus, text: "offline", qos: 1, retain: true))

        // Read back through the same TLS listener with mosquitto_sub.
        let sub = try ChildProcess("/usr/bin/mosquitto_sub", [
            "-h", "localhost", "-p", "\(broker.port)", "--cafile", directory.appendingPathComponent("ca.pem").path,
            "-u", "wearfleet", "-P", "s3cret word", "-t", topics.gatewayStatus, "-C", "1", "-W", "10",
        ])
        #expect(try await readLineOffPool(sub, within: 15) == "offline")
    }

    /// The daemon itself over TLS, its password in a file: the gateway comes online and the
    /// watch's values arrive, read back through the same TLS listener.
    @Test func wearfleetdPublishesOverTLSWithAPasswordFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try Self.broker(in: directory)
        let password = directory.appendingPathComponent("mqtt-password").path
        try "s3cret word\n".write(toFile: password, atomically: true, encoding: .utf8)
        let daemon = try await MQTTDaemon(
            broker: broker, url: "mqtts://localhost:\(broker.port)",
            mqtt: """
                username = "wearfleet"
                password_file = "\(password)"
                ca_file = "\(directory.appendingPathComponent("ca.pem").path)"
                """)
        try await daemon.line(containing: "mqtt: connected to localhost:\(broker.port)")
        let sub = try ChildProcess("/usr/bin/mosquitto_sub", [
            "-h", "localhost", "-p", "\(broker.port)", "--cafile", directory.appendingPathComponent("ca.pem").path,
            "-u", "wearfleet", "-P", "s3cret word", "-t", "wearfleet/device/\(MQTTDaemon.watchSegment)/heart_rate", "-C", "1", "-W", "30",
        ])
        // mosquitto_sub exits after one message (-C 1), so its buffered output arrives then.
        let line = try await readLineOffPool(sub, within: 35)
        #expect(try jsonObject(line)["kind"] as? String == "heart_rate")
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }

    @Test func aWrongPasswordIsRefusedAndRetriedNotFatal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try Self.broker(in: directory)
        let settings = MQTTConnectionSettings(
            host: "localhost", port: broker.port, tls: true, clientID: "wrong", username: "wearfleet", password: "nope",
            caFile: directory.appendingPathComponent("ca.pem").path)
        let client = try MQTTClient(
            settings: settings, schedule: MQTTReconnectSchedule(baseDelay: .milliseconds(20), maxDelay: .milliseconds(50)),
            random: SeededRandom(seed: 10), logger: Logger(label: "test"))
        let refusal = try await client.events.first(within: .seconds(10), "the refusal") {
            if case .disconnected(let reason) = $0 { reason.hasPrefix("refused") } else { false }
        }
        #expect(refusal != .connected)
        _ = try await client.events.first(within: .seconds(10), "a second attempt") { if case .disconnected = $0 { true } else { false } }
        #expect(client.counters.reconnects >= 1 && !client.counters.connected)
        await client.stop(final: nil)
    }

    /// The password file is read before each attempt: a refused password, corrected in the
    /// file, lets the next attempt in without a reload.
    @Test func aPasswordChangedInItsFileIsUsedByTheNextAttempt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try Self.broker(in: directory)
        let passwordFile = directory.appendingPathComponent("mqtt-password").path
        try "nope\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let settings = MQTTConnectionSettings(
            host: "localhost", port: broker.port, tls: true, clientID: "rotated", username: "wearfleet", password: "nope",
            passwordFile: passwordFile, checkPasswordFileMode: true, caFile: directory.appendingPathComponent("ca.pem").path)
        let client = try MQTTClient(
            settings: settings, schedule: MQTTReconnectSchedule(baseDelay: .milliseconds(20), maxDelay: .milliseconds(50)),
            random: SeededRandom(seed: 11), logger: Logger(label: "test"))
        _ = try await client.events.first(within: .seconds(10), "the refusal") {
            if case .disconnected(let reason) = $0 { reason.hasPrefix("refused") } else { false }
        }
        try "s3cret word\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        _ = try await client.events.first(within: .seconds(10), "a connection with the new password") { $0 == .connected }
        await client.stop(final: nil)
    }

    @Test func aPasswordFileReadableByOthersIsNoticed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-pw-\(UUID().uuidString)").path
        defer { unlink(path) }
        try "s3cret\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o640)
        #expect(MQTTPasswordFile.read(path) == MQTTPasswordFile(password: "s3cret", readableByOthers: true))
        chmod(path, 0o604)
        #expect(MQTTPasswordFile.read(path)?.readableByOthers == true)
        chmod(path, 0o600)
        #expect(MQTTPasswordFile.read(path) == MQTTPasswordFile(password: "s3cret", readableByOthers: false))
        #expect(MQTTPasswordFile.read(path + ".missing") == nil)
    }

    @Test func aCredentialWithoutCredentialsDirectoryIsASetupError() throws {
        var mqtt = MQTTSettings()
        mqtt.username = "u"
        mqtt.passwordFile = "mqtt-password"
        #expect(throws: MQTTOutlet.SetupError.self) { try MQTTOutlet.connectionSettings(mqtt, environment: [:]) }
    }
}
