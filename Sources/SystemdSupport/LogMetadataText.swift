import Logging

/// Renders swift-log metadata values as text, the same way for every output format.
enum LogMetadataText {
    static func render(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(render).joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            "[" + dictionary.sorted(by: { $0.key < $1.key }).map { "\($0.key): \(render($0.value))" }
                .joined(separator: ", ") + "]"
        }
    }

    /// Handler metadata, then the metadata provider's, then the call's: later wins, as swift-log's
    /// own handlers do.
    static func merge(
        handler: Logger.Metadata, provider: Logger.MetadataProvider?, call: Logger.Metadata?
    ) -> Logger.Metadata {
        var merged = handler
        if let provided = provider?.get() { merged.merge(provided) { _, new in new } }
        if let call { merged.merge(call) { _, new in new } }
        return merged
    }

    /// What every handler logs for one event: handler, provider and call metadata merged (later
    /// wins), plus the event's error as `error` unless the call already set one.
    static func metadata(
        of event: LogEvent, handler: Logger.Metadata, provider: Logger.MetadataProvider?
    ) -> Logger.Metadata {
        var merged = merge(handler: handler, provider: provider, call: event.metadata)
        if let error = event.error, merged["error"] == nil { merged["error"] = "\(error)" }
        return merged
    }
}
