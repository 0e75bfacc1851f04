import Foundation

/// An error that ends the benchmark, with a sentence saying why.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Progress goes to stderr, so stdout holds only the table.
func log(_ text: String) {
    FileHandle.standardError.write(Data("fleet-bench: \(text)\n".utf8))
}

/// One line on stdout, written at once (the driver reads the roles' lines as they come).
func writeLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
