import FleetControl
import Testing

@Suite("Text tables: alignment, missing values, truncation, untrusted and wide text")
struct TextTableTests {
    let table = TextTable([.init("NAME", maxWidth: 8), .init("N", alignment: .right), .init("NOTE")])

    @Test func columnsAreAlignedToTheWidestCellAndNumbersToTheRight() {
        let lines = table.render([["a", "7", "x"], ["bbbb", "1234", "y"]])
        #expect(lines == [
            "NAME     N  NOTE",
            "a        7  x",
            "bbbb  1234  y",
        ])
    }

    @Test func missingCellsShowADashAndNoLineEndsInSpaces() {
        let lines = table.render([[nil, nil, nil], ["a"]])
        #expect(lines == [
            "NAME  N  NOTE",
            "-     -  -",
            "a     -  -",
        ])
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
    }

    @Test func longCellsAreCutWithAnEllipsisWithinTheColumnsLimit() {
        let lines = table.render([["abcdefghijkl", "1", "a note longer than any limit"]])
        #expect(lines[1] == "abcdefg…  1  a note longer than any limit")
        #expect(TerminalText.width("abcdefg…") == 8)
    }

    @Test("Wide characters count two columns, combining marks none", arguments: [
        ("心拍", 4), ("e\u{301}", 1), ("❤️", 2), ("🫀", 2), ("abc", 3), ("", 0), ("Ａ", 2),
    ])
    func widths(text: String, columns: Int) {
        #expect(TerminalText.width(text) == columns)
    }

    @Test func wideNamesStayAligned() {
        let lines = table.render([["心拍センサー", "1", "x"], ["ab", "2", "y"]])
        // 心拍センサー is 12 columns: cut to 7 columns of characters (3 wide ones) plus "…".
        #expect(lines[1] == "心拍セ…  1  x")
        #expect(lines.map(TerminalText.width).dropFirst().allSatisfy { $0 == TerminalText.width(lines[1]) })
    }

    @Test func truncationNeverSplitsAWideCharacterOverTheLimit() {
        #expect(TerminalText.truncated("心拍センサー", toWidth: 4) == "心…")
        #expect(TerminalText.truncated("心拍", toWidth: 4) == "心拍")
        #expect(TerminalText.truncated("abc", toWidth: 0) == "")
    }

    @Test func escapeSequencesNewlinesAndBidiOverridesAreDefused() {
        #expect(TerminalText.sanitized("evil\u{1B}[2J\nname\u{202E}txt.exe\u{7F}") == "evil?[2J?name?txt.exe?")
        let lines = table.render([["\u{1B}]0;owned\u{07}", "1", "a\rb"]])
        #expect(!lines.joined().contains("\u{1B}"))
        #expect(lines[1].hasSuffix("a?b"))
    }
}
