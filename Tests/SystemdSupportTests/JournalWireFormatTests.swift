import Testing
@testable import SystemdSupport

@Suite struct JournalWireFormatTests {
    @Test func simpleValuesUseTheAssignmentForm() throws {
        let field = try #require(JournalField(name: "MESSAGE", value: "hello"))
        #expect(JournalWireFormat.encode([field]) == Array("MESSAGE=hello\n".utf8))
    }

    @Test func valuesWithNewlinesUseTheLengthPrefixedForm() throws {
        let field = try #require(JournalField(name: "MESSAGE", value: "a\nb"))
        let expected: [UInt8] = Array("MESSAGE\n".utf8) + [3, 0, 0, 0, 0, 0, 0, 0] + Array("a\nb\n".utf8)
        #expect(JournalWireFormat.encode([field]) == expected)
    }

    @Test func decodeInvertsEncode() throws {
        let fields = try [
            #require(JournalField(name: "MESSAGE", value: "multi\nline\n")),
            #require(JournalField(name: "EMPTY", value: "")),
            #require(JournalField(name: "BINARY", value: [0, 1, 2, 61, 10, 255])),
            #require(JournalField(name: "DEVICE_ADDRESS", value: "AA:BB:CC:DD:EE:FF")),
        ]
        #expect(JournalWireFormat.decode(JournalWireFormat.encode(fields)) == fields)
    }

    @Test func malformedDatagramsAreRejected() {
        #expect(JournalWireFormat.decode(Array("MESSAGE".utf8)) == nil)
        #expect(JournalWireFormat.decode(Array("MESSAGE\n".utf8) + [200, 0, 0, 0, 0, 0, 0, 0] + Array("x\n".utf8)) == nil)
        #expect(JournalWireFormat.decode(Array("lower=x\n".utf8)) == nil)
    }
}
