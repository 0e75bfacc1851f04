// IEEE 11073-20601 numbers carry a decimal exponent and reserve bit patterns for "no value"
// conditions. Keeping them as mantissa and exponent (not Double) preserves exactly what the
// device sent, and the special values can never pass for a reading.

/// An IEEE 11073-20601 SFLOAT (16-bit) or FLOAT (32-bit) value: `mantissa × 10^exponent`, or one
/// of the special values the standard reserves.
///
/// Decoding is total: every bit pattern maps to exactly one case. The special bit patterns
/// (SFLOAT 0x07FF NaN, 0x0800 NRes, 0x07FE +INF, 0x0802 −INF, 0x0801 reserved; FLOAT 0x007FFFFF,
/// 0x00800000, 0x007FFFFE, 0x00800002, 0x00800001) decode to their named cases. A pattern whose
/// mantissa is one of those reserved mantissas but whose exponent is not zero is outside the
/// standard's finite range (±2045 for SFLOAT, ±8388605 for FLOAT) and decodes to `.reserved`,
/// never to a number.
///
/// Equality compares representations: `36.5` sent as 365 × 10⁻¹ differs from 3650 × 10⁻², so a
/// decoded value re-encodes to exactly the bits received. Compare `finiteValue` for numbers.
public enum MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    /// A finite value, `mantissa × 10^exponent`.
    case value(mantissa: Int32, exponent: Int8)
    /// Not a number: the device has no valid value.
    case nan
    /// Not at this resolution: the value cannot be represented with the available precision.
    case notAtThisResolution
    case positiveInfinity
    case negativeInfinity
    /// A bit pattern the standard reserves; `raw` is the SFLOAT or FLOAT as received.
    case reserved(raw: UInt32)

    /// Largest finite SFLOAT mantissa magnitude (2^11 − 3).
    public static let sfloatMantissaLimit: Int32 = 2045
    /// Largest finite FLOAT mantissa magnitude (2^23 − 3).
    public static let floatMantissaLimit: Int32 = 8_388_605

    /// Builds a finite value.
    public init(mantissa: Int32, exponent: Int8) {
        self = .value(mantissa: mantissa, exponent: exponent)
    }

    // MARK: - Decoding

    /// Decodes a 16-bit SFLOAT: 4-bit signed exponent, 12-bit signed mantissa.
    public init(sfloatBits raw: UInt16) {
        switch raw {
        case 0x07FF: self = .nan
        case 0x0800: self = .notAtThisResolution
        case 0x07FE: self = .positiveInfinity
        case 0x0802: self = .negativeInfinity
        default:
            let exponent = Int8(truncatingIfNeeded: Int16(bitPattern: raw) >> 12)
            let mantissa = Int32(Int16(bitPattern: raw << 4) >> 4)
            if mantissa.magnitude > Self.sfloatMantissaLimit.magnitude {
                self = .reserved(raw: UInt32(raw))
            } else {
                self = .value(mantissa: mantissa, exponent: exponent)
            }
        }
    }

    /// Decodes a 32-bit FLOAT: 8-bit signed exponent, 24-bit signed mantissa.
    public init(floatBits raw: UInt32) {
        switch raw {
        case 0x007F_FFFF: self = .nan
        case 0x0080_0000: self = .notAtThisResolution
        case 0x007F_FFFE: self = .positiveInfinity
        case 0x0080_0002: self = .negativeInfinity
        default:
            let exponent = Int8(truncatingIfNeeded: Int32(bitPattern: raw) >> 24)
            let mantissa = Int32(bitPattern: raw << 8) >> 8
            if mantissa.magnitude > Self.floatMantissaLimit.magnitude {
                self = .reserved(raw: raw)
            } else {
                self = .value(mantissa: mantissa, exponent: exponent)
            }
        }
    }

    // MARK: - Encoding

    /// The SFLOAT bit pattern, or nil when the value does not fit (mantissa beyond ±2045,
    /// exponent outside −8...7, or a reserved pattern wider than 16 bits).
    public var sfloatBits: UInt16? {
        switch self {
        case .nan: return 0x07FF
        case .notAtThisResolution: return 0x0800
        case .positiveInfinity: return 0x07FE
        case .negativeInfinity: return 0x0802
        case .reserved(let raw):
            guard raw <= 0xFFFF, case .reserved = MedicalFloat(sfloatBits: UInt16(raw)) else { return nil }
            return UInt16(raw)
        case .value(let mantissa, let exponent):
            guard mantissa.magnitude <= Self.sfloatMantissaLimit.magnitude, (-8...7).contains(exponent) else { return nil }
            let exponentBits = UInt16(UInt8(bitPattern: exponent) & 0x0F) << 12
            let mantissaBits = UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
            return exponentBits | mantissaBits
        }
    }

    /// The FLOAT bit pattern, or nil when the mantissa is beyond ±8388605.
    public var floatBits: UInt32? {
        switch self {
        case .nan: return 0x007F_FFFF
        case .notAtThisResolution: return 0x0080_0000
        case .positiveInfinity: return 0x007F_FFFE
        case .negativeInfinity: return 0x0080_0002
        case .reserved(let raw):
            guard case .reserved = MedicalFloat(floatBits: raw) else { return nil }
            return raw
        case .value(let mantissa, let exponent):
            guard mantissa.magnitude <= Self.floatMantissaLimit.magnitude else { return nil }
            let exponentBits = UInt32(UInt8(bitPattern: exponent)) << 24
            let mantissaBits = UInt32(bitPattern: mantissa) & 0x00FF_FFFF
            return exponentBits | mantissaBits
        }
    }

    // MARK: - Reading the value

    /// The number, for finite values only; nil for NaN, NRes, infinities and reserved patterns.
    public var finiteValue: Double? {
        guard case .value(let mantissa, let exponent) = self else { return nil }
        var scale = 1.0
        for _ in 0..<Int(exponent.magnitude) { scale *= 10 }
        return exponent >= 0 ? Double(mantissa) * scale : Double(mantissa) / scale
    }

    /// Exact decimal text for finite values (`36.5`, `-0.05`, `1200`); `nan`, `nres`, `+inf`,
    /// `-inf` or `reserved` otherwise. Used by the key/value rendering.
    public var description: String {
        switch self {
        case .value(let mantissa, let exponent):
            DecimalText.scaled(Int64(mantissa), exponent: Int(exponent))
        case .nan: "nan"
        case .notAtThisResolution: "nres"
        case .positiveInfinity: "+inf"
        case .negativeInfinity: "-inf"
        case .reserved: "reserved"
        }
    }
}
