import Testing
@testable import GATT

@Suite struct DecimalTextTests {
    @Test(arguments: [
        (Int64(832_000), Int64(1024), 1, "812.5"),
        (818_000, 1024, 1, "798.8"),
        (832_000, 1024, 0, "812"),  // 812.5 rounds half to even
        (818_000, 1024, 0, "799"),
        (-3, 2, 0, "-2"),
        (1, 3, 3, "0.333"),
    ])
    func ratioRoundsHalfToEven(numerator: Int64, denominator: Int64, digits: Int, text: String) {
        #expect(DecimalText.ratio(numerator, over: denominator, fractionDigits: digits) == text)
    }

    @Test func hexPadsAndLowerCases() {
        #expect(DecimalText.hex(0xAB, digits: 4) == "00ab")
        #expect(DecimalText.hex(bytes: [0x00, 0xFF, 0x1A]) == "00ff1a")
    }
}
