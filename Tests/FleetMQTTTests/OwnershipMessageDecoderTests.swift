import FleetCore
import FleetMQTT
import Testing

/// Topics and payloads of the agreement between gateways, without a broker.
@Suite struct OwnershipMessageDecoderTests {
    static let topics = OwnershipTopics(prefix: "site/wf", gatewayID: "hall")
    static let decoder = OwnershipMessageDecoder(topics: topics)

    static func decode(_ topic: String, _ text: String) -> OwnershipMessageDecoder.Outcome? {
        decoder.decode(topic: topic, payload: Array(text.utf8))
    }

    @Test func topicsAreTheArchitecturesAndTheirKindsAreReadBack() throws {
        let device = DeviceID(address: try #require(BluetoothAddress("c0:ff:ee:00:00:01")), addressType: .random)
        #expect(Self.topics.owner(device) == "site/wf/device/C0FFEE000001/owner")
        #expect(Self.topics.alive == "site/wf/gateway/hall/alive")
        #expect(Self.topics.bids == "site/wf/gateway/hall/bids")
        #expect(Self.topics.status == MQTTTopics(prefix: "site/wf", gatewayID: "hall", discoveryPrefix: "homeassistant").gatewayStatus)
        #expect(Self.topics.subscriptions == [
            "site/wf/device/+/owner", "site/wf/gateway/+/alive", "site/wf/gateway/+/bids", "site/wf/gateway/+/status",
        ])
        #expect(Self.topics.kind(of: "site/wf/device/C0FFEE000001/owner") == .owner(segment: "C0FFEE000001"))
        #expect(Self.topics.kind(of: "site/wf/gateway/attic/status") == .status(GatewayID("attic")))
        // Commands, states and other gateways' requests are someone else's.
        for other in [
            "site/wf/device/C0FFEE000001/command", "site/wf/device/C0FFEE000001/state", "site/wf/gateway/hall/request/pin",
            "site/wf/device/NOTANADDRESS/owner", "other/device/C0FFEE000001/owner", "site/wf/gateway//alive",
        ] {
            #expect(Self.topics.kind(of: other) == nil, "\(other)")
        }
    }

    @Test func aClaimRoundTripsWithItsAddressTypeInTheJSON() throws {
        let device = DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:01")), addressType: .random)
        let claim = OwnerClaim(device: device, gateway: GatewayID("hall"), epoch: 7, revision: 2, linked: true)
        let payload = try #require(OwnershipMessageDecoder.payload(claim))
        #expect(String(decoding: payload, as: UTF8.self).contains(#""dev":"C0:FF:EE:00:00:01\/random""#)
            || String(decoding: payload, as: UTF8.self).contains(#""dev":"C0:FF:EE:00:00:01/random""#))
        #expect(Self.decoder.decode(topic: Self.topics.owner(device), payload: payload) == .input(.claimReceived(claim)))
    }

    @Test func livenessAndStatusMapOntoHeartbeatsAndOffline() {
        #expect(Self.decode("site/wf/gateway/attic/alive", #"{"gw":"attic","alive":true}"#) == .input(.heartbeat(GatewayID("attic"))))
        #expect(Self.decode("site/wf/gateway/attic/status", "offline") == .input(.gatewayOffline(GatewayID("attic"))))
        // Retained, so no sign of life: a gateway that died without a Will would look alive.
        #expect(Self.decode("site/wf/gateway/attic/status", "online") == .ignored("online"))
        #expect(Self.decode("site/wf/gateway/attic/bids", "") == .input(.bidsReceived(GatewayID("attic"), [:])))
        #expect(Self.decode("site/wf/device/C0FFEE000001/owner", "") == .ignored("claim deleted"))
    }

    @Test func whatAPeerCannotMeanIsMalformed() {
        let malformed: [(String, String)] = [
            ("site/wf/device/C0FFEE000001/owner", "{"),
            ("site/wf/device/C0FFEE000001/owner", #"{"dev":"C0:FF:EE:00:00:02","gw":"a","ep":1,"linked":false}"#),
            ("site/wf/device/C0FFEE000001/owner", #"{"dev":"C0:FF:EE:00:00:01","gw":"a","ep":9007199254740992,"linked":false}"#),
            ("site/wf/device/C0FFEE000001/owner", #"{"dev":"C0:FF:EE:00:00:01","gw":"a","ep":1,"rev":18446744073709551615,"linked":false}"#),
            ("site/wf/gateway/attic/alive", #"{"gw":"hall","alive":true}"#),
            ("site/wf/gateway/attic/bids", #"{"gw":"attic","bids":[{"dev":"nonsense","s":1}]}"#),
            ("site/wf/gateway/attic/status", "gone"),
        ]
        for (topic, text) in malformed {
            guard case .malformed = Self.decode(topic, text) else {
                Issue.record("\(topic) \(text) was not malformed")
                continue
            }
        }
    }
}
