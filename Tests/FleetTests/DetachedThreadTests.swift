import DetachedThread
import Glibc
import Testing
import TestSupport

@Suite("DetachedThread")
struct DetachedThreadTests {
    /// On Linux a nice value belongs to a thread; `who` 0 is the calling thread.
    private static func currentNice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test(
        "a thread started from one at a raised priority runs at the process's nice value, as the service was given",
        .enabled(if: getuid() == 0, "giving a thread a lower nice value than the process's needs CAP_SYS_NICE"))
    func runsAtTheProcessNice() async throws {
        let process = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        let (creator, started) = try await withTimeout(.seconds(5), "both threads to report") {
            await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, Int32), Never>) in
                do {
                    try DetachedThread.start(name: "raised-creator") {
                        // As the concurrency runtime's worker threads are (libdispatch gives them −2 or −4).
                        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, process - 2)
                        let creator = Self.currentNice()
                        do {
                            try DetachedThread.start(name: "started") { continuation.resume(returning: (creator, Self.currentNice())) }
                        } catch {
                            continuation.resume(returning: (creator, Int32.min))
                        }
                    }
                } catch {
                    continuation.resume(returning: (Int32.min, Int32.min))
                }
            }
        }
        #expect(creator == process - 2, "the test's setup: the creator runs at a raised priority")
        #expect(started == process)
    }
}
