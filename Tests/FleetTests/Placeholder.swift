import Testing
@testable import Fleet
