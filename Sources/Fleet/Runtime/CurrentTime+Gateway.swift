import Foundation
import GATT

extension CurrentTime {
    /// The gateway's local time now, as a device's Current Time characteristic takes it: local
    /// wall-clock fields (a measurement device shows and stamps local time), the day of the week,
    /// and "external reference time update" as the reason (the gateway's clock is set by NTP,
    /// not by hand).
    static func gatewayNow(_ date: Date = Date(), timeZone: TimeZone = .current) -> CurrentTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday, .nanosecond], from: date)
        let dateTime = DateTime(
            year: UInt16(clamping: parts.year ?? 0), month: UInt8(clamping: parts.month ?? 0), day: UInt8(clamping: parts.day ?? 0),
            hours: UInt8(clamping: parts.hour ?? 0), minutes: UInt8(clamping: parts.minute ?? 0),
            seconds: UInt8(clamping: parts.second ?? 0))
        // Calendar: 1 = Sunday … 7 = Saturday; the characteristic: 1 = Monday … 7 = Sunday.
        let dayOfWeek = parts.weekday.flatMap { DayOfWeek(rawValue: UInt8(($0 + 5) % 7 + 1)) } ?? .unknown
        let fractions = UInt8(clamping: (parts.nanosecond ?? 0) * 256 / 1_000_000_000)
        return CurrentTime(dateTime: dateTime, dayOfWeek: dayOfWeek, fractions256: fractions, adjustReason: .externalReferenceTimeUpdate)
    }
}
