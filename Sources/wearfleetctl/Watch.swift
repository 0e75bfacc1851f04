import ArgumentParser
import DBus
import FleetControl
import FleetCore
import Foundation

/// `wearfleetctl watch`: live values and state changes, one line each, until SIGINT or SIGTERM
/// (exit 0) or the daemon stops (exit 1).
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print live values and state changes, one line each, until interrupted.",
        discussion: """
            Records come from wearfleetd's WatchValues socket; --json prints each as the daemon \
            sent it (README, "Value JSON"). A client that reads too slowly loses the oldest \
            records; a "dropped" line says how many so far. Ctrl-C or SIGTERM ends it (exit 0); \
            exit 1 when wearfleetd stops or cannot be reached.
            """)

    @OptionGroup var options: BusOptions

    @Argument(help: ArgumentHelp("Only these devices (default: every device).", valueName: "AA:BB:CC:DD:EE:FF"))
    var addresses: [String] = []

    @Option(name: .customLong("characteristic"), help: ArgumentHelp(
        "Only this characteristic's values (2a37 or a 128-bit UUID); repeat for more.", valueName: "uuid"))
    var characteristics: [String] = []

    @Flag(help: "Leave out state changes.")
    var noStates = false

    @Flag(help: "Print each record as JSON (one object per line) instead of text.")
    var json = false

    func validate() throws {
        for address in addresses where BluetoothAddress(address) == nil {
            throw ValidationError("invalid address '\(address)': expected AA:BB:CC:DD:EE:FF")
        }
    }

    func run() async throws {
        let stop = try StopSignals()
        defer { stop.close() }
        try await options.withClient { client in
            let socket = try await client.watch(
                WatchRequest(addresses: addresses, characteristics: characteristics, states: !noStates))
            defer { socket.close() }
            while true {
                switch try socket.receive(stopFD: stop.readFD) {
                case .record(let bytes):
                    // Written at once, not buffered: output is a pipe as often as a terminal.
                    let line = json ? String(decoding: bytes, as: UTF8.self) : WatchRecordLine.render(bytes)
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                case .stopped:
                    return
                case .closed:
                    throw ControlClientError.connectionLost(bus: "wearfleetd (it closed the watch: stopping?)")
                }
            }
        }
    }
}

/// SIGINT and SIGTERM as a readable pipe, so the watch loop's `poll` ends cleanly on either.
final class StopSignals {
    let readFD: Int32
    private let writeFD: Int32
    private let sources: [any DispatchSourceSignal]

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ExitCode(1) }
        readFD = fds[0]
        writeFD = fds[1]
        let writeFD = fds[1]
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                var one: UInt8 = 1
                _ = write(writeFD, &one, 1)
            }
            source.resume()
            return source
        }
    }

    func close() {
        for source in sources { source.cancel() }
        Foundation.close(readFD)
        Foundation.close(writeFD)
    }
}
