// Without -D GATT_FUZZING the same target is a replay tool: it runs every decoder over the files
// given as arguments (a crash input from libFuzzer, a captured notification), so a failure found
// by fuzzing reproduces in a plain debug build.
#if !GATT_FUZZING
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GATT

/// `gatt-fuzz FILE...`: decodes each file as every registered characteristic and prints one
/// line per decoder. Exits 0 when every guarantee held, 1 when a file could not be read.
@main
struct Replay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        if paths.first == "--bench" {
            Bench.run(iterations: paths.dropFirst().first.flatMap { Int($0) } ?? 1_000_000)
            return
        }
        if paths.isEmpty {
            print("usage: gatt-fuzz FILE...  (replays each file through every GATT decoder)")
            print("       gatt-fuzz --bench [N]  (decode throughput, N iterations per sample)")
            print("decoders: " + Harness.uuids.map(\.shortDescription).joined(separator: " "))
            return
        }
        var failed = false
        for path in paths {
            guard let bytes = readFile(path) else {
                print("\(path): cannot read")
                failed = true
                continue
            }
            for uuid in Harness.uuids {
                switch Harness.exercise(bytes[...], as: uuid) {
                case .success(let event): print("\(path) \(uuid.shortDescription): \(event.name): \(event.summary)")
                case .failure(let error): print("\(path) \(uuid.shortDescription): error: \(error)")
                }
            }
        }
        exit(failed ? 1 : 0)
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
#endif
