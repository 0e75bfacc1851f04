/// A test expectation that failed inside a helper, with what was expected and what happened.
struct ExpectationFailed: Error, CustomStringConvertible {
    let description: String
}
