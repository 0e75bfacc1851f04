/// The commands of the catalogue (`CommandCatalogue`), by their op: the word MQTT's requests,
/// `allow_commands` and wearfleetctl's subcommands use. Cases are in the catalogue's order.
public enum CommandName: String, CaseIterable, Sendable, Comparable {
    case write, read, disconnect, reconnect, pin, unpin, subscribe, unsubscribe, nearby, pair, unpair

    /// The catalogue's order.
    public static func < (lhs: CommandName, rhs: CommandName) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }

    /// The command's declaration.
    public var declaration: CommandDeclaration { CommandCatalogue.declaration(of: self) }
}
