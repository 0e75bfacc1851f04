import Testing
@testable import Fleet
@testable import FleetConfiguration
@testable import TOML

@Suite struct ConfigTOMLParserTests {
    func parse(_ text: String) throws -> TOMLTable {
        try TOMLParser.parse(text, file: "t.toml")
    }

    // MARK: - Valid documents

    @Test func keysTablesAndPositions() throws {
        let table = try parse("""
            # comment
            title = "x" # trailing
            [fleet]
              max_connections = 8
            "quoted key" = 1
            'literal key' = 2
            a.b.c = true
            """)
        #expect(table["title"]?.value == .string("x"))
        #expect(table["title"]?.keyPosition == TOMLPosition(file: "t.toml", line: 2, column: 1))
        #expect(table["title"]?.node.position == TOMLPosition(file: "t.toml", line: 2, column: 9))
        guard case .table(let fleet)? = table["fleet"]?.value else { Issue.record("no [fleet]"); return }
        #expect(fleet.position.line == 3)
        #expect(fleet["max_connections"]?.value == .integer(8))
        #expect(fleet["max_connections"]?.keyPosition == TOMLPosition(file: "t.toml", line: 4, column: 3))
        #expect(fleet["quoted key"]?.value == .integer(1))
        #expect(fleet["literal key"]?.value == .integer(2))
        guard case .table(let a)? = fleet["a"]?.value, case .table(let b)? = a["b"]?.value else {
            Issue.record("dotted keys did not create tables"); return
        }
        #expect(b["c"]?.value == .boolean(true))
        #expect(fleet.keys == ["max_connections", "quoted key", "literal key", "a"])
    }

    @Test func arraysOfTablesAndSubtablesOfTheirElements() throws {
        let table = try parse("""
            [[pinned]]
            address = "1"
            [pinned.extra]
            x = 1
            [[pinned]]
            address = "2"
            """)
        guard case .array(let pinned)? = table["pinned"]?.value else { Issue.record("no pinned"); return }
        #expect(pinned.count == 2)
        #expect(pinned.map(\.position.line) == [1, 5])
        guard case .table(let first) = pinned[0].value, case .table(let extra)? = first["extra"]?.value else {
            Issue.record("no pinned.extra"); return
        }
        #expect(extra["x"]?.value == .integer(1))
    }

    @Test func strings() throws {
        let table = try parse(#"""
            basic = "tab\there \"q\" \\ \u00E9 \U0001F600"
            literal = 'C:\path\n'
            multi = """
            one
              two \
                three"""
            multiLiteral = '''
            raw \n ''line'''
            quotes = """a""b"""""
            empty = ""
            """#)
        #expect(table["basic"]?.value == .string("tab\there \"q\" \\ é 😀"))
        #expect(table["literal"]?.value == .string(#"C:\path\n"#))
        #expect(table["multi"]?.value == .string("one\n  two three"))
        #expect(table["multiLiteral"]?.value == .string(#"raw \n ''line"#))
        #expect(table["quotes"]?.value == .string(#"a""b"""#))
        #expect(table["empty"]?.value == .string(""))
    }

    @Test func numbers() throws {
        let table = try parse("""
            a = 1_000
            b = -17
            c = +0
            d = 0xDEAD_beef
            e = 0o755
            f = 0b1101
            g = 3.25
            h = -1e3
            i = 6.02E+23
            j = inf
            k = -inf
            l = 9_223_372_036_854_775_807
            m = -9223372036854775808
            """)
        #expect(table["a"]?.value == .integer(1000))
        #expect(table["b"]?.value == .integer(-17))
        #expect(table["c"]?.value == .integer(0))
        #expect(table["d"]?.value == .integer(0xDEAD_BEEF))
        #expect(table["e"]?.value == .integer(0o755))
        #expect(table["f"]?.value == .integer(13))
        #expect(table["g"]?.value == .float(3.25))
        #expect(table["h"]?.value == .float(-1000))
        #expect(table["i"]?.value == .float(6.02e23))
        #expect(table["j"]?.value == .float(.infinity))
        #expect(table["k"]?.value == .float(-.infinity))
        #expect(table["l"]?.value == .integer(.max))
        #expect(table["m"]?.value == .integer(.min))
        let nan = try parse("n = nan")
        guard case .float(let value)? = nan["n"]?.value else { Issue.record("nan"); return }
        #expect(value.isNaN)
    }

    @Test func arraysAndInlineTables() throws {
        let table = try parse("""
            a = [
              1, # one
              2,
            ]
            b = [ [1, 2], ["x"] , ]
            c = { x = 1, y.z = "w" }
            d = []
            e = {}
            """)
        guard case .array(let a)? = table["a"]?.value else { Issue.record("a"); return }
        #expect(a.map(\.value) == [.integer(1), .integer(2)])
        #expect(a.map(\.position.line) == [2, 3])
        guard case .table(let c)? = table["c"]?.value, case .table(let y)? = c["y"]?.value else { Issue.record("c"); return }
        #expect(c["x"]?.value == .integer(1))
        #expect(y["z"]?.value == .string("w"))
        #expect(table["d"]?.value == .array([]))
        guard case .table(let e)? = table["e"]?.value else { Issue.record("e"); return }
        #expect(e.isEmpty)
    }

    @Test func implicitSuperTableMayBeDefinedLater() throws {
        let table = try parse("[a.b]\nx = 1\n[a]\ny = 2\n[a.b.c]\n")
        guard case .table(let a)? = table["a"]?.value else { Issue.record("a"); return }
        #expect(a["y"]?.value == .integer(2))
        #expect(a.position.line == 3)
    }

    @Test func crlfLineEndings() throws {
        let table = try parse("a = 1\r\n[b]\r\nc = 'x'\r\n")
        guard case .table(let b)? = table["b"]?.value else { Issue.record("b"); return }
        #expect(b["c"]?.keyPosition.line == 3)
    }

    @Test func columnsCountCharactersNotBytes() {
        #expect(syntaxError("é = \"ok\" x") != nil)
        #expect(syntaxError("k = \"éé\" x") == "t.toml:1:10: expected a new line after a value, found 'x'")
    }

    @Test func moreValidSpellings() throws {
        let table = try parse(#"""
            "a"."b" = 1
            c . d = 2
            [ e . "f.g" ]
            h = [ { i = 1 }, { i = 2 } ]
            j = """
            """
            k = 1.0e-3
            l = +99
            m = -0
            n = 0b1_0
            o = "é"   # non-ASCII content
            "" = 'empty key'
            """#)
        guard case .table(let a)? = table["a"]?.value, case .table(let c)? = table["c"]?.value,
              case .table(let e)? = table["e"]?.value, case .table(let fg)? = e["f.g"]?.value else {
            Issue.record("tables"); return
        }
        #expect(a["b"]?.value == .integer(1))
        #expect(c["d"]?.value == .integer(2))
        guard case .array(let h)? = fg["h"]?.value else { Issue.record("h"); return }
        #expect(h.count == 2)
        #expect(fg["j"]?.value == .string(""))
        #expect(fg["k"]?.value == .float(0.001))
        #expect(fg["l"]?.value == .integer(99))
        #expect(fg["m"]?.value == .integer(0))
        #expect(fg["n"]?.value == .integer(2))
        #expect(fg["o"]?.value == .string("é"))
        #expect(fg[""]?.value == .string("empty key"))
    }

    @Test func aByteOrderMarkIsIgnored() throws {
        #expect(try parse("\u{FEFF}a = 1")["a"]?.keyPosition.column == 1)
    }

    // MARK: - Invalid documents, with exact positions

    @Test(arguments: [
        ("a = 1\na = 2", "t.toml:2:1: key 'a' is defined twice (first at line 1)"),
        ("[a]\nx = 1\n[a]", "t.toml:3:1: table [a] is defined twice (first at line 1)"),
        ("[a]\nb.c = 1\n[a.b]", "t.toml:3:1: table [a.b] was already defined with dotted keys at line 2"),
        ("a = 1\n[a]", "t.toml:2:1: 'a' is already a value (line 1); it cannot also be a table"),
        ("[[a]]\n[a]", "t.toml:2:1: [a] is already an array of tables (line 1); it cannot also be a table"),
        ("a = []\n[[a]]", "t.toml:2:1: [[a]] cannot append to 'a', already defined at line 1 as something else than an array of tables"),
        ("a = {x = 1}\n[a.b]", "t.toml:2:2: 'a' is an inline table, which cannot be extended (line 1)"),
        ("[a.b]\n[a]\nb.x = 1", "t.toml:3:1: 'a.b' is already defined at line 1 and cannot be extended with a dotted key"),
        ("x = ", "t.toml:1:5: expected a value, found the end of the file"),
        ("x = 1 2", "t.toml:1:7: expected a new line after a value, found '2'"),
        ("x = \"abc", "t.toml:1:9: unterminated string: a basic string must end on the line it starts"),
        ("x = \"a\\qb\"", "t.toml:1:7: invalid escape sequence '\\q'"),
        ("x = \"\\u12\"", "t.toml:1:6: '\\u' needs exactly 4 hexadecimal digits"),
        ("x = \"\\uD800\"", "t.toml:1:6: escape '\\uD800' is not a Unicode scalar value"),
        ("\n\nx = 01", "t.toml:3:5: '01' is not a valid number"),
        ("x = 1__0", "t.toml:1:5: '1__0' is not a valid number"),
        ("x = 1_", "t.toml:1:5: '1_' is not a valid number"),
        ("x = 9223372036854775808", "t.toml:1:5: integer '9223372036854775808' does not fit in 64 bits"),
        ("x = 1.", "t.toml:1:5: '1.' is not a valid number"),
        ("x = .5", "t.toml:1:5: expected a value, found '.'"),
        ("x = -0x10", "t.toml:1:5: '-0x10' is not a valid number"),
        ("x = yes", "t.toml:1:5: expected a value, found 'y'"),
        ("x = truely", "t.toml:1:5: expected a value, found 'truely' (strings must be quoted)"),
        ("x = 1979-05-27", "t.toml:1:5: dates and times are not supported in this configuration"),
        ("x = [1, 2", "t.toml:1:10: unterminated array: expected ',' or ']', found the end of the file"),
        ("x = [1 2]", "t.toml:1:8: expected ',' or ']' in an array, found '2'"),
        ("x = {a = 1,}", "t.toml:1:12: trailing comma in an inline table"),
        ("x = {a = 1\n}", "t.toml:1:11: expected ',' or '}' in an inline table, found the end of the line"),
        ("x = {a = 1, a = 2}", "t.toml:1:13: key 'a' is defined twice (first at line 1)"),
        ("[a", "t.toml:1:3: expected ']' at the end of the table header, found the end of the file"),
        ("[[a]", "t.toml:1:4: expected ']]' at the end of the array-of-tables header"),
        ("[]", "t.toml:1:2: expected a key, found ']'"),
        ("= 1", "t.toml:1:1: expected a key, found '='"),
        ("a b = 1", "t.toml:1:3: expected '=' after the key 'a', found 'b'"),
        ("a = 1 # bad \u{7} bell", "t.toml:1:13: control character U+0007 in a comment"),
        ("a = \"\u{1}\"", "t.toml:1:6: control character U+0001 in a string (use an escape)"),
        ("a = '''x''''''", "t.toml:1:9: too many quotes at the end of a multi-line string"),
        ("a = \"\"\"x", "t.toml:1:9: unterminated multi-line string: expected '\"\"\"'"),
        ("a = 1\r", "t.toml:1:6: expected a new line after a value, found control character U+000D"),
        ("x = 0x", "t.toml:1:5: '0x' is not a valid number"),
        ("x = 0b102", "t.toml:1:5: '0b102' is not a valid number"),
        ("x = 1e400", "t.toml:1:5: float '1e400' is out of range"),
        ("a.b = 1\na.b.c = 2", "t.toml:2:3: 'a.b' is already defined at line 1 and cannot be extended with a dotted key"),
    ])
    func rejects(_ text: String, _ expected: String) {
        #expect(syntaxError(text) == expected)
    }

    @Test func nestingIsBounded() {
        let deep = "x = " + String(repeating: "[", count: 10_000)
        #expect(syntaxError(deep) == "t.toml:1:69: arrays and inline tables are nested more than 64 levels deep")
        let fine = "x = " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(syntaxError(fine) == nil)
    }
}
