/// A reason the daemon cannot run, with the sysexits code it exits with. Thrown by the service
/// that cannot start; the executable prints the message and exits with the code.
public struct DaemonFailure: Error, CustomStringConvertible {
    public var message: String
    /// 73 (EX_CANTCREAT): the state directory is unusable; 69 (EX_UNAVAILABLE): no bus.
    public var exitCode: Int32

    public init(message: String, exitCode: Int32) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}
