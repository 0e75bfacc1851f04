/// A TOML document that cannot be parsed: where the parser stopped and why.
///
/// `description` is `file:line:column: message`, the form editors and `--check-config` print.
public struct TOMLSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    public var position: TOMLPosition
    public var message: String

    public init(position: TOMLPosition, message: String) {
        self.position = position
        self.message = message
    }

    public var description: String { "\(position): \(message)" }
}
