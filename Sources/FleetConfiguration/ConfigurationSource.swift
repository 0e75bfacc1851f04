import TOML

/// The text of one configuration file and the name it is reported under.
public struct ConfigurationSource: Hashable, Sendable {
    /// The path as given (messages print it unchanged).
    public var file: String
    public var text: String

    public init(file: String, text: String) {
        self.file = file
        self.text = text
    }
}
