import DBus
import Testing
import TestSupport

/// `DBusMessageReader` and `DBusArgumentReader`: header fields and arguments of a received
/// signal, read in place inside a claim, against signals a real sender put on a real bus.
@Suite("Reading a message in place")
struct MessageReaderTests {
    @Test func headerFieldsAreComparedAndCopied() async throws {
        let fixture = try await ClaimFixture { message in
            guard message.hasMember("Reading", of: ClaimFixture.interface) else { return nil }
            let facts = [
                "serial \(message.serial > 0)", "sender \(message.sender ?? "-")", "path \(message.path?.rawValue ?? "-")",
                "interface \(message.interface ?? "-")", "member \(message.member ?? "-")", "signature \(message.signature)",
                "hasPath \(message.hasPath(ClaimFixture.path)) \(message.hasPath("/com/example"))",
                "hasMember \(message.hasMember("Reading", of: "com.example.Other1")) \(message.hasMember("Readings", of: ClaimFixture.interface))",
                "hasSignature \(message.hasSignature("su")) \(message.hasSignature("s")) \(message.hasSignature("suu"))",
            ]
            return facts.joined(separator: "; ")
        }
        let sender = fixture.sender.uniqueName
        try await fixture.send([
            .signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Reading", body: [.string("t"), .uint32(1)])
        ])
        let seen = try await fixture.finish()
        #expect(
            seen == [
                .claimed(
                    "serial true; sender \(sender); path /com/example/sensor; interface com.example.Sensor1; member Reading; "
                        + "signature su; hasPath true false; hasMember false false; hasSignature true false false")
            ])
        await fixture.close()
    }

    @Test func theSenderIsComparedWithoutCopying() async throws {
        let fixture = try await ClaimFixture { message in
            "\(message.hasSender(message.sender ?? "")) \(message.hasSender(":1.99999")) \(message.hasSender(""))"
        }
        try await fixture.send([.signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Reading")])
        #expect(try await fixture.finish() == [.claimed("true false false")])
        await fixture.close()
    }

    @Test func everyKindOfArgumentIsRead() async throws {
        let fixture = try await ClaimFixture { message in
            try? message.withArguments { arguments throws(DBusDecodingError) -> String in
                var parts: [String] = []
                parts.append(try arguments.readString())
                parts.append(try arguments.readObjectPath().rawValue)
                parts.append("\(try arguments.readValue())")
                parts.append("\(arguments.nextIs(.boolean)) \(try arguments.readValue())")
                parts.append("\(try arguments.readBytes())")
                try arguments.readArray { entries throws(DBusDecodingError) in
                    while !entries.isAtEnd {
                        try entries.readDictEntry { entry throws(DBusDecodingError) in
                            let key = try entry.readString()
                            let value = try entry.readVariant { inner throws(DBusDecodingError) in try inner.readValue() }
                            parts.append("\(key)=\(value)")
                        }
                    }
                }
                try arguments.readStruct { fields throws(DBusDecodingError) in
                    parts.append("(\(try fields.readValue()), \(try fields.readString()), end \(fields.isAtEnd))")
                }
                try arguments.readVariant { inner throws(DBusDecodingError) in
                    parts.append("<\(inner.nextSignature() ?? "-")> \(try inner.readBytes())")
                }
                try arguments.skip()
                parts.append("end \(arguments.isAtEnd)")
                return parts.joined(separator: " | ")
            }
        }
        let body: [DBusValue] = [
            .string("héllo"), .objectPath("/a/b"), .uint32(7), .boolean(true), .bytes([0, 255]),
            .stringVariantMap(["Level": .int16(-3), "Name": .string("x")]), .structure([.int32(-1), .string("s")]),
            .variant(.bytes([4, 5])), .stringArray(["skipped"]),
        ]
        try await fixture.send([.signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "All", body: body)])
        #expect(
            try await fixture.finish() == [
                .claimed(
                    "héllo | /a/b | uint32 7 | true true | [0, 255] | Level=int16 -3 | Name='x' | (-1, s, end true) | <ay> [4, 5] | end true")
            ])
        await fixture.close()
    }

    /// An array's size as the wire carries it: what its elements take after the padding before
    /// the first (4 bytes of length plus the characters and NUL for each string, entries
    /// 8-aligned), the same wherever the reader is inside it; nil outside an array.
    @Test func anArraysByteCountIsItsSizeOnTheWire() async throws {
        let fixture = try await ClaimFixture { message in
            try? message.withArguments { arguments throws(DBusDecodingError) -> String in
                var sizes: [String] = ["top \(arguments.arrayByteCount.map(String.init) ?? "nil")"]
                for _ in 0..<4 {
                    try arguments.readArray { elements throws(DBusDecodingError) in
                        let before = elements.arrayByteCount
                        try? elements.skip()
                        sizes.append("\(before.map(String.init) ?? "nil")/\(elements.arrayByteCount.map(String.init) ?? "nil")")
                    }
                }
                try arguments.readStruct { fields throws(DBusDecodingError) in
                    sizes.append("struct \(fields.arrayByteCount.map(String.init) ?? "nil")")
                }
                return sizes.joined(separator: " ")
            }
        }
        let body: [DBusValue] = [
            .bytes([1, 2, 3]), .stringArray([]), .stringArray(["ab", "c"]),
            // "k" (4 + 1 + 1), the signature `u` (1 + 1 + 1), padding to 4 (3), the uint32 (4):
            // 16; the second entry, 8-aligned, from 16 to 32.
            .stringVariantMap(["k": .uint32(1), "l": .uint32(2)]), .structure([.int32(1)]),
        ]
        try await fixture.send([.signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Sizes", body: body)])
        // "ab": 4 + 2 + 1 = 7, padding to 4 (1), "c": 4 + 1 + 1 = 6.
        #expect(try await fixture.finish() == [.claimed("top nil 3/3 0/0 14/14 32/32 struct nil")])
        await fixture.close()
    }

    @Test func nextIsComparesCompleteTypes() async throws {
        let fixture = try await ClaimFixture { message in
            try? message.withArguments { arguments throws(DBusDecodingError) -> String in
                var rows: [String] = []
                let candidates: [DBusType] = [
                    .array(.byte), .array(.int32), .array(.string), .dictionary(key: .string, value: .variant), .structure([.int32, .string]),
                    .string,
                ]
                while !arguments.isAtEnd {
                    let matching = candidates.filter { arguments.nextIs($0) }.map(\.signature)
                    rows.append("\(arguments.nextSignature() ?? "-"): \(matching.joined(separator: ","))")
                    try arguments.skip()
                }
                rows.append("at end: \(candidates.contains { arguments.nextIs($0) }) \(arguments.nextSignature() ?? "nil")")
                return rows.joined(separator: "; ")
            }
        }
        let body: [DBusValue] = [
            .bytes([1]), .array(element: .int32, []), .stringArray(["a"]), .stringVariantMap([:]), .structure([.int32(1), .string("a")]),
            .string("s"),
        ]
        try await fixture.send([.signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Types", body: body)])
        #expect(
            try await fixture.finish() == [
                .claimed("ay: ay; ai: ai; as: as; a{sv}: a{sv}; (is): (is); s: s; at end: false nil")
            ])
        await fixture.close()
    }

    @Test func aMismatchThrowsInsteadOfReading() async throws {
        let fixture = try await ClaimFixture { message in
            try? message.withArguments { arguments -> String in
                var errors: [String] = []
                func attempt(_ read: (inout DBusArgumentReader) throws -> Void) {
                    do {
                        try read(&arguments)
                    } catch let error as DBusDecodingError {
                        errors.append("\(error.expected)/\(error.actual)")
                    } catch {
                        errors.append("unexpected \(error)")
                    }
                }
                attempt { try _ = $0.readString() }
                attempt { try _ = $0.readString(equalTo: "7") }
                attempt { try _ = $0.readObjectPath() }
                attempt { try _ = $0.readBytes() }
                attempt { try $0.readArray { _ in } }
                attempt { try $0.readVariant { _ in } }
                attempt { try $0.readStruct { _ in } }
                attempt { try $0.readDictEntry { _ in } }
                attempt { try _ = $0.readValue() }
                attempt { try _ = $0.readValue() }
                attempt { try $0.skip() }
                return errors.joined(separator: " ")
            }
        }
        try await fixture.send([.signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "One", body: [.uint32(7)])])
        // Every read of the wrong type fails and leaves the `u` in place; the first readValue
        // takes it, and reading past the end fails too.
        #expect(
            try await fixture.finish() == [
                .claimed("s/u s/u o/u ay/u a/u v/u r/u e/u a value/nothing a value/nothing")
            ])
        await fixture.close()
    }
}
