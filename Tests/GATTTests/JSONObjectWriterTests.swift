import GATT
import Testing

@Suite("The JSON object writer")
struct JSONObjectWriterTests {
    func text(_ build: (inout JSONObjectWriter) -> Void) -> String {
        var writer = JSONObjectWriter()
        build(&writer)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    @Test func keysKeepTheirOrderAndTheObjectIsCompact() {
        #expect(text { _ in } == "{}")
        #expect(
            text {
                $0.string("b", "x")
                $0.integer("a", -3)
                $0.bool("c", true)
                $0.hex("d", [0x00, 0xAB])
            } == #"{"b":"x","a":-3,"c":true,"d":"00ab"}"#)
    }

    @Test func stringsAreEscaped() {
        #expect(text { $0.string("k", "a\"b\\c\n\r\t\u{01}\u{1F}é ✓") } == #"{"k":"a\"b\\c\n\r\t\u0001\u001fé ✓"}"#)
    }

    @Test func numbersAreWrittenAsNumbersOnlyWhenTheyAreOne() {
        #expect(text { $0.number("n", "36.5") } == #"{"n":36.5}"#)
        #expect(text { $0.number("n", "-0.05") } == #"{"n":-0.05}"#)
        #expect(text { $0.number("n", "0") } == #"{"n":0}"#)
        for notANumber in ["nan", "+inf", "-inf", "unsuccessful", "", "-", "01", "1.", ".5", "1e3", "1.2.3", "0x10"] {
            #expect(text { $0.number("n", notANumber) } == #"{"n":"\#(notANumber)"}"#, "\(notANumber)")
        }
        #expect(text { $0.numbers("l", ["1", "2.5", "nan"]) } == #"{"l":[1,2.5,"nan"]}"#)
        #expect(text { $0.strings("l", [String]()) } == #"{"l":[]}"#)
    }

    @Test func objectsNest() {
        var inner = JSONObjectWriter()
        inner.string("x", "y")
        #expect(text { $0.object("o", inner); $0.integer("z", 1) } == #"{"o":{"x":"y"},"z":1}"#)
    }
}
