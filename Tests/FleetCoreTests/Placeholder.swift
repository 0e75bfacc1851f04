import Testing
@testable import FleetCore
