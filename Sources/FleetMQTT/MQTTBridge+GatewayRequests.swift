import Fleet
import FleetControl
import FleetCore
import GATT
import Logging

// Gateway-scope requests, in the shape of Zigbee2MQTT's bridge requests: a JSON object on
// `<prefix>/gateway/<gateway_id>/request/<op>` (an optional `transaction`, a string or a number,
// plus the op's arguments) is answered on `<prefix>/gateway/<gateway_id>/response/<op>` with
// `{"transaction":…,"status":"ok","data":{…}}` or `{"transaction":…,"status":"error","error":"…"}`.
// The ops are the catalogue's commands declared at gateway scope (`CommandDeclaration.Scopes`),
// checked and run as every other front end's are; `allow_commands` governs them as it does the
// device-scope ones.

/// A gateway request waiting for its turn.
struct GatewayRequest: Sendable {
    var op: String
    var payload: [UInt8]
}

extension MQTTBridge {
    /// Answers one gateway request for `op`.
    func gatewayRequest(_ op: String, _ payload: [UInt8]) async {
        let responseTopic = topics.gatewayResponse(op)
        func answer(_ bytes: [UInt8]) { client.publish(MQTTMessage(topic: responseTopic, payload: bytes, qos: 1, retain: false)) }
        let request: MQTTCommandRequest
        let command: CheckedCommand
        do throws(MQTTCommandRequest.Rejection) {
            request = try MQTTCommandRequest.parseGateway(payload, op: op)
            command = try request.checked(scope: .gateway)
        } catch {
            logger.warning("mqtt: gateway request refused: \(error.message)", metadata: ["event": "mqtt_request_refused", "op": "\(op.prefix(32))"])
            answer(MQTTGatewayResponse.error(error.id, error.message))
            return
        }
        guard allowed.contains(command.name) else {
            logger.warning("mqtt: gateway request \(op) refused: not in allow_commands", metadata: ["event": "mqtt_request_refused", "op": "\(op)"])
            answer(MQTTGatewayResponse.error(request.id, "\(op) is not allowed (allow_commands in [mqtt])"))
            return
        }
        logger.info("mqtt: gateway request \(op)", metadata: ["event": "mqtt_request", "op": "\(op)"])
        do throws(FleetCommandRunner.Failure) {
            let outcome = try await runner.run(command)
            answer(MQTTGatewayResponse.ok(request.id) { MQTTCommandResult.write(outcome, of: command.declaration, into: &$0) })
        } catch {
            answer(MQTTGatewayResponse.error(request.id, error.message))
        }
    }

    /// Answers a request that will not run with `error`, its transaction kept where it can be read.
    static func refuseGatewayRequest(_ payload: [UInt8], op: String, topics: MQTTTopics, client: MQTTClient, error message: String) {
        let transaction = try? MQTTCommandRequest.parseGateway(payload, op: op).id
        client.publish(MQTTMessage(
            topic: topics.gatewayResponse(op), payload: MQTTGatewayResponse.error(transaction ?? nil, message), qos: 1, retain: false))
    }
}

/// The answer on `…/response/<op>`.
enum MQTTGatewayResponse {
    static func ok(_ transaction: MQTTCommandRequest.Identifier?, data: (inout JSONObjectWriter) -> Void = { _ in }) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 96)
        if let transaction { MQTTCommandResult.write(transaction, key: "transaction", into: &object) }
        object.string("status", "ok")
        var content = JSONObjectWriter(capacity: 64)
        data(&content)
        object.object("data", content)
        return object.finish()
    }

    static func error(_ transaction: MQTTCommandRequest.Identifier?, _ message: String) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 128)
        if let transaction { MQTTCommandResult.write(transaction, key: "transaction", into: &object) }
        object.string("status", "error")
        object.string("error", message)
        return object.finish()
    }
}
