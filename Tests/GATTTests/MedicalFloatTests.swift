import PropertyBased
import Testing
@testable import GATT

@Suite struct MedicalFloatTests {
    @Test(arguments: [
        (UInt16(0x07FF), MedicalFloat.nan),
        (0x0800, .notAtThisResolution),
        (0x07FE, .positiveInfinity),
        (0x0802, .negativeInfinity),
        (0x0801, .reserved(raw: 0x0801)),
    ])
    func sfloatSpecialValuesDecodeToTheirCase(bits: UInt16, expected: MedicalFloat) {
        #expect(MedicalFloat(sfloatBits: bits) == expected)
        #expect(MedicalFloat(sfloatBits: bits).finiteValue == nil)
    }

    @Test(arguments: [
        (UInt32(0x007F_FFFF), MedicalFloat.nan),
        (0x0080_0000, .notAtThisResolution),
        (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity),
        (0x0080_0001, .reserved(raw: 0x0080_0001)),
    ])
    func floatSpecialValuesDecodeToTheirCase(bits: UInt32, expected: MedicalFloat) {
        #expect(MedicalFloat(floatBits: bits) == expected)
        #expect(MedicalFloat(floatBits: bits).finiteValue == nil)
    }

    @Test func sfloatDecodesNegativeExponent() {
        // 0xF16D: exponent -1, mantissa 0x16D = 365.
        #expect(MedicalFloat(sfloatBits: 0xF16D) == .value(mantissa: 365, exponent: -1))
        #expect(MedicalFloat(sfloatBits: 0xF16D).description == "36.5")
    }

    @Test func sfloatDecodesNegativeMantissa() {
        // 0x2FFE: exponent 2, mantissa 0xFFE = -2.
        #expect(MedicalFloat(sfloatBits: 0x2FFE) == .value(mantissa: -2, exponent: 2))
        #expect(MedicalFloat(sfloatBits: 0x2FFE).finiteValue == -200)
    }

    @Test func floatDecodesNegativeExponent() {
        // 0xFF00016D: exponent -1, mantissa 365.
        #expect(MedicalFloat(floatBits: 0xFF00_016D) == .value(mantissa: 365, exponent: -1))
        #expect(MedicalFloat(floatBits: 0xFF00_016D).finiteValue == 36.5)
    }

    @Test func reservedMantissaWithNonZeroExponentIsNotANumber() {
        #expect(MedicalFloat(sfloatBits: 0x17FF) == .reserved(raw: 0x17FF))
        #expect(MedicalFloat(floatBits: 0x017F_FFFF) == .reserved(raw: 0x017F_FFFF))
    }

    @Test(arguments: [
        (MedicalFloat.value(mantissa: 5, exponent: -3), "0.005"),
        (.value(mantissa: -12, exponent: -1), "-1.2"),
        (.value(mantissa: 12, exponent: 2), "1200"),
        (.value(mantissa: 0, exponent: 3), "0"),
        (.nan, "nan"), (.notAtThisResolution, "nres"), (.positiveInfinity, "+inf"), (.negativeInfinity, "-inf"),
    ])
    func rendersExactDecimalText(value: MedicalFloat, text: String) {
        #expect(value.description == text)
    }

    @Test func everySFLOATBitPatternRoundTrips() {
        for bits in UInt16.min...UInt16.max {
            #expect(MedicalFloat(sfloatBits: bits).sfloatBits == bits)
        }
    }

    @Test func floatBitPatternsRoundTrip() async {
        await propertyCheck(count: 2000, input: Gen.uint32()) { bits in
            #expect(MedicalFloat(floatBits: bits).floatBits == bits)
        }
    }

    @Test func sfloatRefusesValuesOutsideItsRange() {
        #expect(MedicalFloat.value(mantissa: 2046, exponent: 0).sfloatBits == nil)
        #expect(MedicalFloat.value(mantissa: 1, exponent: 8).sfloatBits == nil)
        #expect(MedicalFloat.value(mantissa: .min, exponent: 0).sfloatBits == nil)
        #expect(MedicalFloat.reserved(raw: 0x1234).sfloatBits == nil)
    }
}
