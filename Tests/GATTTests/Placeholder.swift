import Testing
@testable import GATT
