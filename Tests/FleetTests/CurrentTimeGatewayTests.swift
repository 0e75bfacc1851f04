import Foundation
import GATT
import Testing
@testable import Fleet

@Suite("The gateway's time as a device's Current Time")
struct CurrentTimeGatewayTests {
    @Test func localFieldsDayOfWeekAndReason() throws {
        // 2026-11-29T06:40:12.5Z is a Sunday; in UTC+1 it is 07:40:12 local.
        let date = Date(timeIntervalSince1970: 1_795_934_412.5)
        let zone = try #require(TimeZone(secondsFromGMT: 3600))
        let time = CurrentTime.gatewayNow(date, timeZone: zone)
        #expect(time.dateTime == DateTime(year: 2026, month: 11, day: 29, hours: 7, minutes: 40, seconds: 12))
        #expect(time.dayOfWeek == .sunday)
        #expect(time.fractions256 == 128)
        #expect(time.adjustReason == .externalReferenceTimeUpdate)
        // It round-trips through the characteristic's encoding.
        #expect(try CurrentTime.decode(time.encode()) == time)
        let monday = CurrentTime.gatewayNow(date.addingTimeInterval(86_400), timeZone: zone)
        #expect(monday.dayOfWeek == .monday)
    }
}
