import Foundation
import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

/// Loading stays linear: a large generated configuration, and a very long line, parse quickly.
@Suite struct ConfigScaleTests {
    @Test func aThousandPinnedDevices() throws {
        var text = "[classes.hr]\nsubscribe = [\"2A37\"]\n"
        for index in 0..<1000 {
            let low = String(index % 256, radix: 16).leftPadded(to: 2)
            let high = String(index / 256, radix: 16).leftPadded(to: 2)
            text += "[[pinned]]\naddress = \"AA:BB:CC:00:\(high):\(low)\"\nname = \"d\(index)\"\nclass = \"hr\"\npriority = \(index % 100)\n\n"
        }
        let start = ContinuousClock.now
        let configuration = try #require(validConfiguration(text))
        let elapsed = ContinuousClock.now - start
        #expect(configuration.pinned.count == 1000)
        print("config scale: 1000 pinned devices (\(text.utf8.count) bytes) loaded in \(elapsed)")
    }

    @Test func aLongLine() throws {
        let text = "x = [" + String(repeating: "1, ", count: 100_000) + "]"
        let start = ContinuousClock.now
        let table = try TOMLParser.parse(text, file: "long.toml")
        let elapsed = ContinuousClock.now - start
        guard case .array(let elements)? = table["x"]?.value else { Issue.record("no array"); return }
        #expect(elements.count == 100_000)
        #expect(elements.last?.position.column == 5 + 3 * 99_999 + 1)
        print("config scale: one \(text.utf8.count)-byte line parsed in \(elapsed)")
    }
}
