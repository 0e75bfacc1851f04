import DBus
import FleetControl
import Testing

/// What wearfleetctl says when wearfleetd does not answer names the timeout that call was made
/// with: a command's (a `Write` may take up to 24 s) or a query's.
@Suite("Control client errors")
struct ControlClientErrorTests {
    @Test func noAnswerNamesTheTimeoutTheCallWasMadeWith() {
        let noReply = DBusError(name: DBusError.noReply, message: "Did not receive a reply")
        let command = ControlClientError(noReply, bus: "the system bus", address: "AA:BB:CC:00:00:01", command: true)
        #expect(command == .noAnswer(after: ControlClient.commandTimeout))
        #expect(command.description == "wearfleetd did not answer within 30.0 seconds")
        let query = ControlClientError(noReply, bus: "the system bus")
        #expect(query == .noAnswer(after: ControlClient.callTimeout))
        #expect(query.description == "wearfleetd did not answer within 10.0 seconds")
    }
}
