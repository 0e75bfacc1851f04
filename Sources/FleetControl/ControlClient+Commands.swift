import DBus

// The commands of `org.wearfleet.Daemon1`, as wearfleetctl calls them: any command of the
// catalogue, checked before the call, encoded by its declaration (`CommandDeclaration+DBus`).
// Each answers once the daemon knows the outcome; a refusal is a `ControlClientError` naming
// why (and its exit code).

extension ControlClient {
    /// A command's call timeout: wearfleetd answers a `Write` within 24 s (its queue wait, the
    /// write and a margin: `FleetOrchestrator.writeAnswerBudget`), every other command sooner.
    public static let commandTimeout: Duration = .seconds(30)

    /// Calls the command's method with what was given and answers its outcome.
    public func run(_ command: CheckedCommand) async throws -> CommandOutcome {
        let declaration = command.declaration
        let address = command.address?.description
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
                interface: WearfleetControl.interfaceName, member: declaration.member, declaration.dbusArguments(command),
                timeout: Self.commandTimeout)
            return try declaration.outcome(fromDBus: reply)
        } catch {
            throw ControlClientError(error, bus: bus, address: address, command: true)
        }
    }
}
