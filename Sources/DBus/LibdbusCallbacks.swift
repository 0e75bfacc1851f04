import CDBus

// C entry points handed to libdbus. They all run on a connection's loop thread (libdbus calls
// them from dispatch, watch handling or registration done there), which is the executor of the
// `DBusConnection` actor, so `assumeIsolated` is valid in each.

private func thread(_ data: UnsafeMutableRawPointer?) -> ConnectionThread? {
    data.map { Unmanaged<ConnectionThread>.fromOpaque($0).takeUnretainedValue() }
}

let addWatchCallback: DBusAddWatchFunction = { watch, data in
    guard let watch, let thread = thread(data) else { return 0 }
    thread.addWatch(watch)
    return 1
}

let removeWatchCallback: DBusRemoveWatchFunction = { watch, data in
    guard let watch, let thread = thread(data) else { return }
    thread.removeWatch(watch)
}

let toggleWatchCallback: DBusWatchToggledFunction = { _, data in
    thread(data)?.watchesChanged()
}

let addTimeoutCallback: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout, let thread = thread(data) else { return 0 }
    thread.addTimeout(timeout)
    return 1
}

let removeTimeoutCallback: DBusRemoveTimeoutFunction = { timeout, data in
    guard let timeout, let thread = thread(data) else { return }
    thread.removeTimeout(timeout)
}

let toggleTimeoutCallback: DBusTimeoutToggledFunction = { timeout, data in
    guard let timeout, let thread = thread(data) else { return }
    thread.toggleTimeout(timeout)
}

let filterCallback: DBusHandleMessageFunction = { _, message, data in
    guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let connection = Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue()
    return connection.onLoopThread(UnsafeTransfer(value: message)) { connection, message in connection.handleIncoming(message.value) }
}

let releaseConnectionCallback: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<DBusConnection>.fromOpaque(data).release()
}

let pendingCallNotify: DBusPendingCallNotifyFunction = { _, data in
    guard let data else { return }
    let context = Unmanaged<PendingCallContext>.fromOpaque(data).takeUnretainedValue()
    let id = context.id
    context.connection.assumeIsolated { $0.completeCall(id) }
}

let releasePendingCallContext: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<PendingCallContext>.fromOpaque(data).release()
}
