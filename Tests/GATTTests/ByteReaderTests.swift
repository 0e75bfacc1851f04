import Testing
@testable import GATT

@Suite struct ByteReaderTests {
    @Test func readsUnsignedIntegersLittleEndian() throws {
        var reader = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A] as [UInt8])
        #expect(try reader.readUInt8("a") == 0x01)
        #expect(try reader.readUInt16("b") == 0x0302)
        #expect(try reader.readUInt24("c") == 0x06_0504)
        #expect(try reader.readUInt32("d") == 0x0A09_0807)
        #expect(reader.isAtEnd)
    }

    @Test func reads48And64BitIntegers() throws {
        var reader = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88] as [UInt8])
        #expect(try reader.readUInt48("a") == 0x0605_0403_0201)
        #expect(try reader.readUInt64("b") == 0x8877_6655_4433_2211)
    }

    @Test func signExtendsNarrowSignedIntegers() throws {
        var reader = ByteReader([0xFF, 0xFE, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80] as [UInt8])
        #expect(try reader.readInt8("a") == -1)
        #expect(try reader.readInt24("b") == -2)
        #expect(try reader.readInt48("c") == -0x8000_0000_0000)
    }

    @Test func truncatedReadNamesFieldAndOffset() throws {
        var reader = ByteReader([0x01, 0x02, 0x03] as [UInt8])
        _ = try reader.readUInt16("first")
        let error = #expect(throws: GATTDecodeError.self) { try reader.readUInt16("second") }
        #expect(error == GATTDecodeError(field: "second", offset: 2, reason: .truncated(needed: 2, available: 1)))
    }

    @Test func failedReadDoesNotMoveTheCursor() throws {
        var reader = ByteReader([0x01] as [UInt8])
        _ = try? reader.readUInt32("wide")
        #expect(reader.offset == 0)
        #expect(try reader.readUInt8("narrow") == 1)
    }

    @Test func readsFromANonZeroBasedSliceWithoutCopying() throws {
        let payload: [UInt8] = [0xAA, 0x34, 0x12, 0xBB]
        var reader = ByteReader(payload[1...2])
        #expect(try reader.readUInt16("value") == 0x1234)
        #expect(reader.isAtEnd)
    }

    @Test func readBytesReturnsASliceAndAdvances() throws {
        var reader = ByteReader([1, 2, 3, 4] as [UInt8])
        _ = try reader.readUInt8("skip")
        #expect(Array(try reader.readBytes(2, "middle")) == [2, 3])
        #expect(Array(reader.readRemainingBytes()) == [4])
        #expect(reader.remainingCount == 0)
    }

    @Test func readsValidUTF8() throws {
        var reader = ByteReader(Array("Zürich ✓".utf8))
        #expect(try reader.readRemainingUTF8("name") == "Zürich ✓")
    }

    @Test(arguments: [
        [0xC3, 0x28] as [UInt8],  // bad continuation
        [0xC0, 0xAF],  // overlong "/"
        [0xED, 0xA0, 0x80],  // encoded surrogate
        [0xE2, 0x82],  // truncated sequence
        [0xFF],  // never valid
    ])
    func rejectsIllFormedUTF8(bytes: [UInt8]) {
        var reader = ByteReader([0x41] + bytes)
        _ = try? reader.readUInt8("prefix")
        #expect(throws: GATTDecodeError(field: "name", offset: 1, reason: .invalidUTF8)) {
            try reader.readRemainingUTF8("name")
        }
    }

    @Test func readsFixedLengthUTF8() throws {
        var reader = ByteReader(Array("abcdef".utf8))
        #expect(try reader.readUTF8(3, "head") == "abc")
        #expect(reader.offset == 3)
    }
}
