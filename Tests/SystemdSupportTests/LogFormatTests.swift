import Testing
@testable import SystemdSupport

@Suite struct LogFormatTests {
    private let stderrIdentity = LogFormat.FileIdentity(device: 23, inode: 4711)

    @Test func journalWhenJournalStreamIsOurStandardError() {
        #expect(LogFormat.detect(environment: ["JOURNAL_STREAM": "23:4711"], standardError: stderrIdentity) == .journal)
    }

    @Test func consoleWhenStandardErrorWasRedirectedElsewhere() {
        // Inherited by a child whose stderr now goes to a file or terminal.
        #expect(LogFormat.detect(environment: ["JOURNAL_STREAM": "23:4712"], standardError: stderrIdentity) == .console)
    }

    @Test(arguments: [[:], ["JOURNAL_STREAM": ""], ["JOURNAL_STREAM": "23"], ["JOURNAL_STREAM": "x:y"], ["JOURNAL_STREAM": "23:4711:1"]])
    func consoleWithoutAUsableJournalStream(environment: [String: String]) {
        #expect(LogFormat.detect(environment: environment, standardError: stderrIdentity) == .console)
    }

    @Test func consoleWhenStandardErrorIsClosed() {
        #expect(LogFormat.detect(environment: ["JOURNAL_STREAM": "23:4711"], standardError: nil) == .console)
    }

    @Test func detectsTheRealStandardError() throws {
        let identity = try #require(LogFormat.FileIdentity.of(descriptor: 2))
        let environment = ["JOURNAL_STREAM": "\(identity.device):\(identity.inode)"]
        #expect(LogFormat.detect(environment: environment) == .journal)
    }

    @Test func commandLineSpellings() {
        #expect(LogFormat(rawValue: "journal") == .journal)
        #expect(LogFormat(rawValue: "console") == .console)
        #expect(LogFormat(rawValue: "json") == .json)
        #expect(LogFormat(rawValue: "syslog") == nil)
    }
}
