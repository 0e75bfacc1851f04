// Entering an actor's isolation from code that runs on a connection's thread outside of any
// job: libdbus's callbacks, the loop's hooks, and the signal handlers and claims they call.
//
// `Actor.assumeIsolated` would do, but its check asks the concurrency runtime for the current
// executor, which for a custom executor on a thread with no task costs ~430 instructions, plus
// the reabstraction it wraps the closure in; paid several times per signal, that was a few
// percent of receiving one (callgrind, fleet-bench's ingest workload). The check here is one
// comparison of thread ids; what it proves is what `assumeIsolated` proves for this executor
// (its `checkIsolated` makes the same comparison): the connection's thread runs one job at a
// time, so while it runs this code, no job of an actor whose executor it is runs anywhere.

extension DBusConnection {
    /// Calls `function` isolated to `actor` with `argument`, from a signal handler or claim of
    /// this connection (on its thread), for an actor whose executor is this connection's (its
    /// `unownedExecutor` returns the connection's, as `BlueZClient` does). Like
    /// `actor.assumeIsolated { function($0, argument) }`, with a cheaper check; traps when not on
    /// this connection's thread or when `actor` has another executor.
    ///
    /// The function takes its argument rather than capturing it: a closure that captures has to
    /// be made escapable for the cast below (`withoutActuallyEscaping`), which allocated its
    /// context twice per call; a closure literal that captures nothing is a constant.
    @inlinable
    public nonisolated func callIsolated<A: Actor, Argument: ~Copyable, T>(
        _ actor: A, _ argument: borrowing Argument, _ function: @escaping (isolated A, borrowing Argument) -> T
    ) -> T {
        checkIsolation(of: actor.unownedExecutor)
        // What `assumeIsolated` does too: an `isolated` parameter is passed like any other.
        typealias Unisolated = (A, borrowing Argument) -> T
        return unsafeBitCast(function, to: Unisolated.self)(actor, argument)
    }

    /// Traps unless the caller is on this connection's thread and `executor` is the
    /// connection's own.
    @usableFromInline
    nonisolated func checkIsolation(of executor: UnownedSerialExecutor) {
        precondition(thread.isOnLoopThread, "not on the thread of this D-Bus connection")
        precondition(
            (executor.asSerialExecutor() as AnyObject?) === thread, "the actor does not run on this D-Bus connection's executor")
    }

    /// `assumeIsolated` for this connection itself, for libdbus's callbacks and the loop's hooks:
    /// `function` gets the connection isolated, and `argument`. Like `callIsolated`, it takes a
    /// function that captures nothing, so that nothing is allocated per call (the filter calls
    /// it for every message).
    nonisolated func onLoopThread<Argument, T>(
        _ argument: Argument, _ function: @escaping (isolated DBusConnection, Argument) -> T
    ) -> T {
        precondition(thread.isOnLoopThread, "not on the thread of this D-Bus connection")
        typealias Unisolated = (DBusConnection, Argument) -> T
        return unsafeBitCast(function, to: Unisolated.self)(self, argument)
    }
}
