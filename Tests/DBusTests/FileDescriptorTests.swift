import DBus
import Glibc
import Testing
import TestSupport

@Suite("UNIX file descriptor passing")
struct FileDescriptorTests {
    @Test func aDescriptorSentToAPeerIsUsableThere() async throws {
        let fixture = try BusFixture()
        let server = try await fixture.connect("server")
        let client = try await fixture.connect("client")
        try await TestService.export(on: server)
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        let text = "through the bus"
        _ = text.withCString { write(fds[1], $0, text.utf8.count) }
        close(fds[1])
        // Borrowed: libdbus duplicates it, so we still own (and close) our read end.
        let reply = try await client.callTest(server, "ReadFD", [.unixFD(DBusFileDescriptor(borrowing: fds[0]))])
        close(fds[0])
        #expect(try reply.decode(String.self, at: 0) == text)
    }

    @Test func aDescriptorReceivedFromAPeerIsOwnedByTheReceiver() async throws {
        let fixture = try BusFixture()
        let server = try await fixture.connect("server")
        let client = try await fixture.connect("client")
        try await TestService.export(on: server)
        let reply = try await client.callTest(server, "MakeFD", [.string("from the peer")])
        let descriptor = try reply.fileDescriptor(at: 0)
        let fd = try #require(descriptor.take())
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "from the peer")
        #expect(descriptor.take() == nil, "taken once")
    }

    @Test func sendingAClosedDescriptorWrapperIsRejectedBeforeLibdbusSeesIt() async throws {
        let fixture = try BusFixture()
        let server = try await fixture.connect("server")
        let client = try await fixture.connect("client")
        try await TestService.export(on: server)
        let wrapper = DBusFileDescriptor(borrowing: 0)
        _ = wrapper.take()
        await #expect { try await client.callTest(server, "ReadFD", [.unixFD(wrapper)]) } throws: {
            ($0 as? DBusError)?.name == DBusError.invalidArgs
        }
    }
}
