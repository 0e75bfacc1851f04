// Hand-written field encodings, taken from the specifications' field definitions. Vectors for
// every flag combination are assembled from these fragments, independently of the encoders.
@testable import GATT

enum Fragment {
    /// 2024-03-05 14:07:09.
    static let dateTimeBytes: [UInt8] = [0xE8, 0x07, 0x03, 0x05, 0x0E, 0x07, 0x09]
    static let dateTime = DateTime(year: 2024, month: 3, day: 5, hours: 14, minutes: 7, seconds: 9)

    static func has(_ flags: Int, _ bit: Int) -> Bool { flags & (1 << bit) != 0 }
}
