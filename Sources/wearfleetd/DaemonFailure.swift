/// A reason the daemon cannot run, with the sysexits code it exits with.
struct DaemonFailure: Error {
    var message: String
    /// 73 (EX_CANTCREAT): the state directory is unusable; 69 (EX_UNAVAILABLE): no bus.
    var exitCode: Int32
}
