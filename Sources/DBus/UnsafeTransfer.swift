/// Carries a non-Sendable value (a libdbus pointer) from the connection thread to code that
/// runs on that same thread.
///
/// `@unchecked Sendable` is sound only under the rule every use follows: the value is created on
/// a connection's loop thread and consumed by an actor whose executor is that loop thread, so it
/// is never touched by two threads.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
}
