import PropertyBased
import Testing
@testable import GATT

@Suite struct ByteWriterTests {
    @Test func writesLittleEndian() throws {
        var writer = ByteWriter()
        writer.writeUInt16(0x0201)
        try writer.writeUInt24(0x05_0403)
        writer.writeUInt32(0x0908_0706)
        #expect(writer.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9])
    }

    @Test func refusesA24BitValueThatDoesNotFit() {
        var writer = ByteWriter()
        #expect(throws: GATTEncodeError.self) { try writer.writeUInt24(0x100_0000) }
        #expect(writer.bytes.isEmpty)
    }

    @Test func refusesASigned48BitValueThatDoesNotFit() {
        var writer = ByteWriter()
        #expect(throws: GATTEncodeError.self) { try writer.writeInt48(0x8000_0000_0000) }
    }

    @Test func writesStringsWithoutTerminator() {
        var writer = ByteWriter()
        writer.writeUTF8("hé")
        #expect(writer.bytes == [0x68, 0xC3, 0xA9])
    }

    @Test func integersRoundTripThroughTheReader() async {
        await propertyCheck(input: Gen.uint64(), Gen.int32(in: -0x80_0000...0x7F_FFFF), Gen.int64()) { wide, narrow, signed in
            var writer = ByteWriter()
            writer.writeUInt64(wide)
            try writer.writeInt24(narrow)
            try writer.writeInt48(signed >> 16)
            writer.writeInt16(Int16(truncatingIfNeeded: signed))
            var reader = ByteReader(writer.bytes)
            #expect(try reader.readUInt64("a") == wide)
            #expect(try reader.readInt24("b") == narrow)
            #expect(try reader.readInt48("c") == signed >> 16)
            #expect(try reader.readInt16("d") == Int16(truncatingIfNeeded: signed))
            #expect(reader.isAtEnd)
        }
    }
}
