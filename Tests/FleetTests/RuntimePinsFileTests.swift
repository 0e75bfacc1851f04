import FleetCore
import Foundation
import Testing
@testable import FleetState

/// `runtime-pins.json`: what a restart finds of the pins made at run time.
@Suite("The runtime pins file")
struct RuntimePinsFileTests {
    static let band = DeviceID(address: BluetoothAddress("C4:7A:10:00:00:03")!, addressType: .random)
    static let strap = DeviceID(address: BluetoothAddress("C4:7A:20:00:00:02")!)
    static let pins = [
        FleetRuntimeConfiguration.PinnedDevice(id: strap, name: "strap \"2\" ✓", className: "heart-rate", priority: 3),
        FleetRuntimeConfiguration.PinnedDevice(id: band, className: "band"),
    ]

    @Test func whatIsSavedIsLoadedBackOrderedByDevice() async throws {
        let directory = try TemporaryDirectory()
        let file = RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger)
        #expect(await file.load().isEmpty, "no file: no pins")
        try await file.save(Self.pins)
        let again = RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger)
        #expect(await again.load() == Self.pins.sorted { $0.id < $1.id })
        let text = try String(contentsOf: file.file, encoding: .utf8)
        #expect(text.contains("\"format\" : \"wearfleet-runtime-pins\"") && text.contains("C4:7A:10:00:00:03/random"))
        #expect(try directory.contents() == [RuntimePinsFile.fileName], "no temporary left behind")
    }

    @Test func aPriorityOutsideTheOneRangeFromAnEarlierVersionIsBroughtIntoIt() async throws {
        let directory = try TemporaryDirectory()
        let file = RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger)
        try await file.save([
            FleetRuntimeConfiguration.PinnedDevice(id: Self.strap, className: "heart-rate", priority: -3),
            FleetRuntimeConfiguration.PinnedDevice(id: Self.band, className: "band", priority: 5000),
        ])
        #expect(await file.load().map(\.priority) == [1000, 0], "band, then strap: within 0…1000")
    }

    @Test func anOlderSaveNeverOverwritesANewerOne() async throws {
        let directory = try TemporaryDirectory()
        let file = RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger)
        try await file.save(Self.pins, generation: 2)
        try await file.save([], generation: 1)
        #expect(await file.load().count == 2)
        try await file.save([], generation: 3)
        #expect(await file.load().isEmpty)
    }

    @Test func aFailedSaveThrowsAndKeepsThePreviousFile() async throws {
        let directory = try TemporaryDirectory()
        try await RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger).save(Self.pins)
        let failing = RuntimePinsFile(directory: directory.url, writer: FailingWriter(), logger: StateStoreFixture.logger)
        await #expect(throws: StateStoreError.self) { try await failing.save([]) }
        #expect(await failing.load().count == 2)
    }

    @Test(arguments: [
        "{ not json", "{\"format\": \"something-else\", \"version\": 1, \"pins\": []}",
        "{\"format\": \"wearfleet-runtime-pins\", \"version\": 9, \"pins\": []}",
        "{\"format\": \"wearfleet-runtime-pins\", \"version\": 1, \"pins\": [{\"device\": \"nonsense\", \"class\": \"a\", \"priority\": 0}]}",
    ])
    func aBadFileIsSetAsideAndTheDaemonStartsWithoutRuntimePins(_ content: String) async throws {
        let directory = try TemporaryDirectory()
        try content.write(to: directory.url.appendingPathComponent(RuntimePinsFile.fileName), atomically: true, encoding: .utf8)
        let file = RuntimePinsFile(directory: directory.url, logger: StateStoreFixture.logger)
        #expect(await file.load().isEmpty)
        let names = try directory.contents()
        #expect(names.count == 1 && names[0].hasPrefix("\(RuntimePinsFile.fileName).corrupt-"), "\(names)")
        let kept = try String(contentsOf: directory.url.appendingPathComponent(names[0]), encoding: .utf8)
        #expect(kept == content, "kept aside untouched")
    }
}
