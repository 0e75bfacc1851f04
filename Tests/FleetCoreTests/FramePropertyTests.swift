import Testing
import PropertyBased
import FleetCore

@Suite struct FramePropertyTests {
    @Test func reassemblesWhateverTheFramerSplit() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 0...600), Gen.int(in: 7...517)) { message, mtu in
            let framer = try Framer(mtu: mtu)
            let fragments = try framer.fragments(of: message)
            #expect(fragments.allSatisfy { $0.count <= mtu - 3 })
            var reassembler = FrameReassembler()
            var rebuilt: [[UInt8]] = []
            for fragment in fragments {
                if let message = try reassembler.receive(fragment) { rebuilt.append(message) }
            }
            #expect(rebuilt == [message])
        }
    }

    @Test func neverCrashesOrBuffersPastTheLimitOnArbitraryBytes() async {
        let fragment = Gen.uint8().array(of: 0...40)
        await propertyCheck(count: 300, input: fragment.array(of: 0...50)) { fragments in
            var reassembler = FrameReassembler(maxMessageSize: 64)
            for fragment in fragments {
                if let message = try? reassembler.receive(fragment) {
                    #expect(message.count <= 64)
                }
            }
        }
    }

    @Test func neverDeliversAMessageOtherThanTheOneSentWhenOneByteIsCorrupted() async {
        let input = zip(Gen.uint8().array(of: 1...200), Gen.int(in: 0...10_000), Gen.uint8(in: 1...255))
        await propertyCheck(count: 300, input: input) { message, position, mask in
            var fragments = try Framer(mtu: 23).fragments(of: message)
            let total = fragments.reduce(0) { $0 + $1.count }
            var offset = position % total
            var index = 0
            while offset >= fragments[index].count {
                offset -= fragments[index].count
                index += 1
            }
            fragments[index][offset] ^= mask
            var reassembler = FrameReassembler()
            for fragment in fragments {
                if let delivered = try? reassembler.receive(fragment) {
                    #expect(delivered == message)
                }
            }
        }
    }
}
