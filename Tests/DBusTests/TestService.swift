import DBus
import Glibc

/// A small exported service the tests call: every feature of the export side in one place.
enum TestService {
    static let interface = "com.example.Test1"
    static let path: DBusObjectPath = "/com/example/test"
    static let failure = DBusError(name: "com.example.Error.Nope", message: "refused on purpose")

    static func definition() -> DBusInterface {
        DBusInterface(
            interface,
            methods: [
                DBusMethod("Echo", inputs: [.init("value", .variant)], outputs: [.init("value", .variant)],
                    handler: .sync { call in call.body }),
                DBusMethod("Add", inputs: [.init("a", .int32), .init("b", .int32)], outputs: [.init("sum", .int32)],
                    handler: .sync { call in
                        let a = try call.body.decode(Int32.self, at: 0)
                        let b = try call.body.decode(Int32.self, at: 1)
                        return [.int32(a &+ b)]
                    }),
                DBusMethod("Fail", handler: .sync { _ in throw failure }),
                DBusMethod("WrongReply", outputs: [.init("s", .string)], handler: .sync { _ in [.uint32(1)] }),
                DBusMethod("Sleep", inputs: [.init("milliseconds", .uint32)], handler: .async { call in
                    let milliseconds = try call.body.decode(UInt32.self, at: 0)
                    try await Task.sleep(for: .milliseconds(Int(milliseconds)))
                    return []
                }),
                DBusMethod("ReadFD", inputs: [.init("fd", .unixFD)], outputs: [.init("text", .string)],
                    handler: .sync { call in
                        let descriptor = try call.body.fileDescriptor(at: 0)
                        guard let fd = descriptor.rawValue else { throw failure }
                        var buffer = [UInt8](repeating: 0, count: 256)
                        let count = read(fd, &buffer, buffer.count)
                        descriptor.close()
                        return [.string(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self))]
                    }),
                DBusMethod("MakeFD", inputs: [.init("text", .string)], outputs: [.init("fd", .unixFD)],
                    handler: .sync { call in
                        let text = try call.body.decode(String.self, at: 0)
                        var fds: [Int32] = [-1, -1]
                        guard pipe(&fds) == 0 else { throw failure }
                        _ = text.utf8CString.withUnsafeBytes { write(fds[1], $0.baseAddress, text.utf8.count) }
                        close(fds[1])
                        // libdbus duplicates the read end into the reply; ours closes when released.
                        return [.unixFD(DBusFileDescriptor(owning: fds[0]))]
                    }),
            ],
            properties: [
                DBusProperty("Name", .string),
                DBusProperty("Level", .uint32, access: .readwrite),
                DBusProperty("Secret", .string, access: .write),
                DBusProperty("Quiet", .int32, emitsChange: false),
            ],
            signals: [DBusSignal("Tick", arguments: [.init("count", .uint32)])],
            willSet: { _, name, value in
                if name == "Level", case .uint32(let level) = value, level > 100 {
                    throw DBusError(name: "com.example.Error.TooLoud", message: "Level must be at most 100")
                }
            })
    }

    static let initialProperties: [String: DBusValue] = [
        "Name": .string("test service"), "Level": .uint32(7), "Quiet": .int32(0),
    ]

    static func export(on connection: DBusConnection) async throws {
        try await connection.export(definition(), properties: initialProperties, at: path)
    }
}

extension DBusConnection {
    /// Calls a method of the test service exported by `peer`.
    func callTest(
        _ peer: DBusConnection, _ member: String, _ body: [DBusValue] = [], timeout: Duration = .seconds(10)
    ) async throws -> [DBusValue] {
        try await call(
            destination: peer.uniqueName, path: TestService.path, interface: TestService.interface, member: member, body,
            timeout: timeout)
    }

    func callProperties(
        _ peer: DBusConnection, _ member: String, _ body: [DBusValue], path: DBusObjectPath = TestService.path
    ) async throws -> [DBusValue] {
        try await call(
            destination: peer.uniqueName, path: path, interface: "org.freedesktop.DBus.Properties", member: member, body)
    }
}
