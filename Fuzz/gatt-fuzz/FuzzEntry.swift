// libFuzzer entry point, compiled only for fuzzing builds (-D GATT_FUZZING with
// -sanitize=fuzzer). SwiftPM links every executable target's entry point as `main`, which
// shadows libFuzzer's own, so `FuzzMain` hands control to libFuzzer's driver explicitly.
#if GATT_FUZZING
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GATT

/// Four lower-case hex digits, the spelling `GATT_FUZZ_DECODER` accepts.
enum ShortUUIDText {
    static func hex(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 4 - text.count) + text
    }
}

/// The decoder named by `GATT_FUZZ_DECODER` (e.g. `2a37`), or nil to fuzz every decoder, the
/// first input byte selecting which.
let selectedDecoder: BluetoothUUID? = {
    guard let value = getenv("GATT_FUZZ_DECODER") else { return nil }
    let text = String(cString: value)
    guard let uuid = Harness.registeredUUID(text) else {
        fatalError("GATT_FUZZ_DECODER=\(text) is not a registered characteristic")
    }
    return uuid
}()

/// libFuzzer's driver: `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`.
typealias FuzzerCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
typealias FuzzerDriver = @convention(c) (
    UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    FuzzerCallback
) -> CInt

@main
struct FuzzMain {
    static func main() {
        if let value = getenv("GATT_FUZZ_DECODER"), String(cString: value) == "list" {
            // `make fuzz` iterates over this list, so it never drifts from the registry.
            print(Harness.uuids.map { $0.uuid16.map { ShortUUIDText.hex($0) } ?? $0.description }.joined(separator: " "))
            return
        }
        // Looked up at run time because no Swift module declares it; the fuzzer runtime is
        // linked into this executable by -sanitize=fuzzer.
        // RTLD_DEFAULT (a C macro Swift does not import): search the executable and its libraries.
        #if os(Linux)
        let defaultHandle: UnsafeMutableRawPointer? = nil
        #else
        let defaultHandle = UnsafeMutableRawPointer(bitPattern: -2)
        #endif
        guard let symbol = dlsym(defaultHandle, "LLVMFuzzerRunDriver") else {
            fatalError("libFuzzer runtime not linked: build with -sanitize=fuzzer")
        }
        let driver = unsafeBitCast(symbol, to: FuzzerDriver.self)
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(driver(&argc, &argv, fuzzOneInput))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let selectedDecoder {
        _ = Harness.exercise(bytes[...], as: selectedDecoder)
    } else if let selector = bytes.first {
        _ = Harness.exercise(bytes.dropFirst(), as: Harness.uuids[Int(selector) % Harness.uuids.count])
    }
    return 0
}
#endif
