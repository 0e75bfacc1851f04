import Foundation
import GATT

/// A measurement device's own clock: it runs from a wrong start at power-on until a client writes
/// Current Time, and stamps each measurement with its reading when the measurement was taken.
///
/// Simulated time: its seconds are the scenario's, so with `timeScale` 0.1 it runs ten times
/// faster than the wall clock, as every other delay does.
struct DeviceClock: Sendable {
    /// What the clock reads at power-on: a device whose battery was out has lost the time.
    static let powerOnTime = DateTime(year: 2020, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0)

    /// The reading (seconds since 1970-01-01T00:00:00, no time zone) at `setAt`.
    private var readingAtSet: Double
    private var setAt: ContinuousClock.Instant
    /// The adjust reason of the last write (none until one).
    private(set) var adjustReason: CurrentTime.AdjustReason = []

    init(poweredOnAt instant: ContinuousClock.Instant) {
        readingAtSet = Self.seconds(of: Self.powerOnTime) ?? 0
        setAt = instant
    }

    /// The clock's reading now.
    func now(timeScale: Double) -> DateTime {
        let elapsed = ContinuousClock.now - setAt
        let simulated = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Self.dateTime(at: readingAtSet + simulated / max(timeScale, 1e-9))
    }

    /// The Current Time value a read returns (no fractions: the device keeps whole seconds).
    func currentTime(timeScale: Double) -> CurrentTime { now(timeScale: timeScale).currentTime(adjustReason: adjustReason) }

    /// Sets the clock to a written Current Time; false (the clock unchanged) when its date is not
    /// a whole known date a clock can run from.
    mutating func set(to written: CurrentTime) -> Bool {
        let date = written.dateTime
        guard date.year != 0, date.month != 0, date.day != 0, let seconds = Self.seconds(of: date) else { return false }
        readingAtSet = seconds + Double(written.fractions256) / 256
        setAt = .now
        adjustReason = written.adjustReason
        return true
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, UTC: the device has no time zone)

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    /// Seconds since 1970 of a date and time, nil when the fields make no real date (31 February).
    static func seconds(of dateTime: DateTime) -> Double? {
        let components = DateComponents(
            year: Int(dateTime.year), month: Int(dateTime.month), day: Int(dateTime.day), hour: Int(dateTime.hours),
            minute: Int(dateTime.minutes), second: Int(dateTime.seconds))
        guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else { return nil }
        return date.timeIntervalSince1970
    }

    static func dateTime(at seconds: Double) -> DateTime {
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds.rounded(.down)))
        return DateTime(
            year: UInt16(clamping: parts.year ?? 0), month: UInt8(clamping: parts.month ?? 0), day: UInt8(clamping: parts.day ?? 0),
            hours: UInt8(clamping: parts.hour ?? 0), minutes: UInt8(clamping: parts.minute ?? 0),
            seconds: UInt8(clamping: parts.second ?? 0))
    }

    /// ISO day of week (Monday 1 … Sunday 7) of a date.
    static func dayOfWeek(of dateTime: DateTime) -> CurrentTime.DayOfWeek {
        guard let seconds = seconds(of: dateTime) else { return .unknown }
        // Foundation counts Sunday as 1.
        let weekday = calendar.component(.weekday, from: Date(timeIntervalSince1970: seconds))
        return CurrentTime.DayOfWeek(rawValue: UInt8((weekday + 5) % 7 + 1)) ?? .unknown
    }
}

extension DateTime {
    /// This date as the Current Time characteristic carries it.
    func currentTime(adjustReason: CurrentTime.AdjustReason) -> CurrentTime {
        CurrentTime(dateTime: self, dayOfWeek: DeviceClock.dayOfWeek(of: self), fractions256: 0, adjustReason: adjustReason)
    }
}
