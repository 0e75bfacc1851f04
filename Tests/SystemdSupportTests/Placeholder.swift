import Testing
@testable import SystemdSupport
