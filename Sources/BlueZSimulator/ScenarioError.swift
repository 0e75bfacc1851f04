/// A scenario that cannot be used, with where and why.
public enum ScenarioError: Error, CustomStringConvertible {
    case invalid(String, String)
    public var description: String {
        switch self {
        case .invalid(let place, let reason): return "\(place): \(reason)"
        }
    }
}
