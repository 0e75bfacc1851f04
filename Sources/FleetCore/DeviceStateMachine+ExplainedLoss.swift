// BlueZ 5.66 reports the links an adapter's power-off ends (and those a stopping bluetoothd ends)
// as `Connected` false with no reason, and only afterwards says why: `Powered` false, or
// bluetoothd leaving the bus. A pending `Connect` can likewise fail before the fleet hears of
// the power-off that failed it. At the moment of the loss the machine cannot tell radio loss
// from either, and radio loss must be retried at once, so the failure is recorded as usual and
// taken back when the fleet explains it (`linkLossExplained`, within
// `FleetStateMachine.linkLossCauseWindow`). Taking it back, rather than deferring the failure,
// keeps the common case (a real loss) exactly as it was: its retry is not delayed by the window,
// and its journal line and metrics are not held back.
//
// Explainable are the failures the fleet keeps to explain: a link lost without a reason, and
// every failure that ends a granted attempt (a `Connect` error, its timeout, its object lost a
// second time), each of which the fleet sees as `attemptFinished(.failed)`. Failures the machine
// decides itself on a link (missing services, a timeout of setup or writes) are not.
//
// Only the most recent failure can be taken back, and only while nothing happened since: no
// newer link nor a newer attempt that has an outcome (`session` unchanged, or one more with
// that attempt still connecting or ended by the environment), no later than
// `linkLossCauseWindow` after it, and the reconnect controller as that failure left it (no
// newer failure, ready connection, reset by command or reload). Anything newer is kept, so a
// stale explanation can never undo a failure it does not explain.

extension DeviceStateMachine {
    /// What recording one failure changed, kept so that it can be undone.
    struct ExplainableFailure: Hashable, Sendable {
        /// The adapter of the link or attempt the failure ended.
        var adapter: AdapterID
        var failureClass: FailureClass
        /// The session whose link or attempt it ended.
        var session: UInt64
        var reconnectBefore: ReconnectController
        /// The controller as the failure left it: any later change means something newer
        /// happened, which taking this failure back must not undo.
        var reconnectAfter: ReconnectController
        var needsRediscoveryBefore: Bool
        var objectLostBeforeLinkBefore: Bool
        /// When it was recorded: an explanation later than `FleetStateMachine.linkLossCauseWindow`
        /// after it is for something else.
        var at: MonotonicInstant
    }

    /// Records a failure that ended a link or attempt through `adapter` (call after teardown,
    /// like `fail`), keeping what it changed in case the fleet puts it down to the adapter or
    /// bluetoothd.
    mutating func failExplainably(
        _ failureClass: FailureClass,
        error: DeviceEvent.Failure?,
        endedOn adapter: AdapterID,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        let reconnectBefore = reconnect
        let needsRediscoveryBefore = needsRediscovery
        let objectLostBeforeLinkBefore = objectLostBeforeLink
        fail(failureClass, error: error, now: now, random: &random, &effects)
        explainableFailure = ExplainableFailure(
            adapter: adapter, failureClass: failureClass, session: session, reconnectBefore: reconnectBefore, reconnectAfter: reconnect,
            needsRediscoveryBefore: needsRediscoveryBefore, objectLostBeforeLinkBefore: objectLostBeforeLinkBefore, at: now)
    }

    /// The fleet learned that the link or attempt last lost on `adapter` was ended by `cause`:
    /// the failure recorded for it is taken back as if it had been an environment event
    /// (`adapterUnpowered`, `bluetoothdVanished`: no failure), and a wait it imposed (backoff,
    /// a budget's or the breaker's suspension, a give-up) ends: the device is pursued as the
    /// environment allows (usually it is about to hear that its adapter or bluetoothd is gone,
    /// and waits for them, not for a backoff).
    mutating func linkLossExplained(
        _ adapter: AdapterID, cause: FleetEvent.LinkLossCause, now: MonotonicInstant, _ effects: inout [DeviceEffect]
    ) {
        // The retry the failure led to may already be under way: on the real stack a stopping
        // bluetoothd's `Powered` false came 50–530 ms after the links' `Connected` false, at
        // times later than the first retry (`fast_first_retry`, 250 ms) was granted. While that
        // attempt has no outcome of its own it is not something newer to keep; it goes on (and
        // its adapter's going ends it without a failure).
        guard let failure = explainableFailure, now.duration(since: failure.at) <= FleetStateMachine.linkLossCauseWindow else { return }
        // The retry granted since, still connecting, or ended by its adapter or bluetoothd going
        // (no outcome of its own): nothing newer of the device's.
        let retryWithoutOutcome: Bool
        switch state {
        case .connecting(_?), .suspended(.bluetoothdUnavailable), .suspended(.noPoweredAdapter):
            retryWithoutOutcome = session == failure.session + 1
        default:
            retryWithoutOutcome = false
        }
        guard failure.adapter == adapter, failure.session == session || retryWithoutOutcome, reconnect == failure.reconnectAfter
        else { return }
        explainableFailure = nil
        reconnect = failure.reconnectBefore
        needsRediscovery = failure.needsRediscoveryBefore
        objectLostBeforeLink = failure.objectLostBeforeLinkBefore
        effects.append(.emit(.failureWithdrawn(failure.failureClass, cause: cause, session: failure.session)))
        switch state {
        case .backingOff, .suspended(.budgetExhausted), .suspended(.circuitOpen), .suspended(.gaveUp):
            // With the session and the controller unchanged, this wait is the failure's decision.
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        default:
            // Already on its way again (asking for an attempt, resolving), or waiting for bluetoothd
            // or an adapter, or not wanted: only the bookkeeping was the failure's.
            break
        }
    }
}
