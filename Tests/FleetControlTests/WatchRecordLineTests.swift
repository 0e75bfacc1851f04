import FleetControl
import Testing

@Suite("wearfleetctl watch's text lines")
struct WatchRecordLineTests {
    static func line(_ json: String) -> String { WatchRecordLine.render(Array(json.utf8)) }

    @Test func aValueShowsTimeDeviceNameKindAndSummary() {
        #expect(
            Self.line(#"{"kind":"heart_rate","device":"AA:BB:CC:00:00:01","address_type":"public","name":"strap-1","session":"5-3","characteristic":"00002a37-0000-1000-8000-00805f9b34fb","time":"2026-11-24T20:17:01.270112Z","value":{"name":"heart_rate_measurement","heart_rate_bpm":71},"summary":"71 bpm","hex":"0047"}"#)
                == "20:17:01.270Z  AA:BB:CC:00:00:01  strap-1  heart_rate  71 bpm")
    }

    @Test func aRawValueShowsItsBytesAndAnInvalidOneWhyItDidNotDecode() {
        #expect(Self.line(#"{"kind":"raw","device":"AA:BB:CC:00:00:01","time":"2026-11-24T20:17:01.000000Z","hex":"dead"}"#)
            == "20:17:01.000Z  AA:BB:CC:00:00:01  -  raw  dead")
        #expect(
            Self.line(#"{"kind":"invalid","device":"AA:BB:CC:00:00:01","time":"2026-11-24T20:17:01.000000Z","error":{"field":"rr_interval","offset":2,"message":"rr_interval at offset 2: truncated"},"hex":"104801"}"#)
                == "20:17:01.000Z  AA:BB:CC:00:00:01  -  invalid  undecodable: rr_interval at offset 2: truncated [104801]")
    }

    @Test func aStateChangeSaysFromWhatWhyAndWhere() {
        #expect(
            Self.line(#"{"kind":"state","device":"AA:BB:CC:00:00:02","address_type":"public","adapter":"hci0","name":"strap-2","session":"5-3","state":"backingOff","previous":"ready","reason":"transient","time":"2026-11-24T20:17:02.004000Z"}"#)
                == "20:17:02.004Z  AA:BB:CC:00:00:02  strap-2  state  backingOff (was ready, transient, session 5-3, hci0)")
    }

    @Test func lostRecordsAreCounted() {
        #expect(Self.line(#"{"kind":"dropped","dropped":12,"time":"2026-11-24T20:17:03.101000Z"}"#)
            == "20:17:03.101Z  dropped  12 records lost so far (reading too slowly)")
    }

    @Test func namesFromDevicesAreDefusedAndUnreadableRecordsShownAsTheyCame() {
        let line = Self.line(#"{"kind":"battery","device":"AA:BB:CC:00:00:01","name":"evil\u001b[2J","time":"2026-11-24T20:17:01.000000Z","summary":"battery 5%"}"#)
        #expect(!line.contains("\u{1B}"))
        #expect(Self.line("not json") == "not json")
    }
}
