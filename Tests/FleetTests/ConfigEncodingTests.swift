import DeterministicRandom
import Foundation
import Testing
@testable import FleetConfiguration
@testable import TOML

/// Bytes that are not UTF-8 text, and NUL bytes, are reported at `file:line:column` like every
/// other configuration error.
@Suite("Configuration encoding")
struct ConfigEncodingTests {
    static func errors(_ bytes: [UInt8], file: String = "/etc/wearfleet/wearfleetd.toml") -> [String] {
        switch ConfigurationLoader.source(file: file, bytes: bytes) {
        case .success: []
        case .failure(let errors): errors.errors.map(\.description)
        }
    }

    @Test func aLatin1ByteIsReportedAtItsLineAndColumn() {
        // "# café" in UTF-8 on line 1, then "# été" written in Latin-1 on line 3.
        let bytes = Array("# caf\u{E9}\n[fleet]\n# ".utf8) + [0xE9, UInt8(ascii: "t"), 0xE9] + Array("\n".utf8)
        #expect(Self.errors(bytes) == [
            "/etc/wearfleet/wearfleetd.toml:3:3: not valid UTF-8 (byte 0xE9): a character cut short",
            "/etc/wearfleet/wearfleetd.toml:3:5: not valid UTF-8 (byte 0xE9): a character cut short",
        ])
    }

    @Test func aNulByteIsReportedWhereverItIs() {
        let bytes = Array("[fleet]\nmax".utf8) + [0] + Array("_connections = 4\n".utf8)
        #expect(Self.errors(bytes) == ["/etc/wearfleet/wearfleetd.toml:2:4: NUL byte (U+0000): a configuration file is text"])
    }

    @Test func columnsCountCharactersNotBytesAndSkipAByteOrderMark() {
        let bytes = [0xEF, 0xBB, 0xBF] + Array("é€😀".utf8) + [0xFF]
        #expect(Self.errors(bytes) == ["/etc/wearfleet/wearfleetd.toml:1:4: not valid UTF-8 (byte 0xFF)"])
    }

    @Test func aCharacterCutShortAtTheEndIsOneProblem() {
        #expect(Self.errors(Array("a = \"".utf8) + [0xE2, 0x82]) == [
            "/etc/wearfleet/wearfleetd.toml:1:6: not valid UTF-8 (byte 0xE2): a character cut short",
        ])
    }

    @Test func overlongFormsAndSurrogatesAreNotUTF8() {
        for bad: [UInt8] in [[0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80]] {
            #expect(!Self.errors(bad).isEmpty, "\(bad)")
        }
    }

    @Test func aBinaryFileGivesTenProblemsAndSaysHowManyMore() {
        let errors = Self.errors([UInt8](repeating: 0, count: 25))
        #expect(errors.count == TOMLEncodingCheck.reportedLimit)
        #expect(errors.last?.hasSuffix("(and 15 more such bytes)") == true)
    }

    /// Property: for any bytes, no problem is reported exactly when the bytes are valid UTF-8
    /// (Swift's own validation) without a NUL byte.
    @Test func agreesWithSwiftsUTF8ValidationOnRandomBytes() {
        var random = SeededRandom(seed: 19)
        // Bytes drawn mostly from the ranges where UTF-8's rules bite.
        let alphabet: [UInt8] = [0x00, 0x0A, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...8, using: &random)
            let bytes = (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            let valid = String(validating: bytes, as: UTF8.self) != nil && !bytes.contains(0)
            #expect(TOMLEncodingCheck.problems(in: bytes, file: "f").isEmpty == valid, "\(bytes)")
        }
    }

    @Test func checkConfigReadsTheFileAndReportsThePosition() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-encoding-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let main = directory.appendingPathComponent("wearfleetd.toml")
        try Data(Array("[fleet]\n".utf8) + [0xFF] + Array("\n".utf8)).write(to: main)
        guard case .failure(let errors) = ConfigurationLoader.load(mainFile: main.path, dropInDirectory: nil) else {
            Issue.record("a file with a byte that is not UTF-8 loaded")
            return
        }
        #expect(errors.errors.map(\.description) == ["\(main.path):2:1: not valid UTF-8 (byte 0xFF)"])
    }
}
