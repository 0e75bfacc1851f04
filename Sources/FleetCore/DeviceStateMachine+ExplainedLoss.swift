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
//
// The most recent failure may stand for a short chain: a loss, then its first retry (250 ms
// later) failing on the same adapter before the power-off that ended both is heard. On the real
// stack under load `Powered` false came after that retry's failure; taking back only the retry's
// left the loss counted against the strap. A failed attempt (no link came up in its session)
// recorded on the same adapter by the very next session, with the controller as the previous one
// left it, joins the chain — a link that came up and was lost starts a chain of its own, since
// the failure before it happened before a connection succeeded, so not through the cause — and an
// explanation takes back every failure in it that is within `linkLossCauseWindow` when the
// cause comes (at most the newest `longestExplainableChain`; the older ones of a longer row are
// the device's own).

extension DeviceStateMachine {
    /// What recording the most recent failures changed, kept so that it can be undone.
    struct ExplainableFailure: Hashable, Sendable {
        /// One failure of the chain, and what it changed.
        struct Recorded: Hashable, Sendable {
            var failureClass: FailureClass
            /// The session whose link or attempt it ended.
            var session: UInt64
            var reconnectBefore: ReconnectController
            var needsRediscoveryBefore: Bool
            var objectLostBeforeLinkBefore: Bool
            /// When it was recorded: one older than `FleetStateMachine.linkLossCauseWindow` is no
            /// longer the same cause's.
            var at: MonotonicInstant
        }
        /// The adapter of the links or attempts the failures ended.
        var adapter: AdapterID
        /// Oldest first, never empty; the last is the most recent failure.
        var chain: [Recorded]
        /// The controller as the most recent failure left it: any later change means something
        /// newer happened, which taking the chain back must not undo.
        var reconnectAfter: ReconnectController
        var latest: Recorded { chain[chain.count - 1] }
    }

    /// The most failures one explanation takes back (a loss and the retries that failed with it);
    /// of a longer row, the newest.
    static let longestExplainableChain = 3

    /// Records a failure that ended a link or attempt through `adapter` (call after teardown,
    /// like `fail`), keeping what it changed in case the fleet puts it down to the adapter or
    /// bluetoothd. `endedALink`: a link had come up in the session (not a failed attempt).
    mutating func failExplainably(
        _ failureClass: FailureClass,
        error: DeviceEvent.Failure?,
        endedOn adapter: AdapterID,
        endedALink: Bool = false,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        let reconnectBefore = reconnect
        let recorded = ExplainableFailure.Recorded(
            failureClass: failureClass, session: session, reconnectBefore: reconnectBefore,
            needsRediscoveryBefore: needsRediscovery, objectLostBeforeLinkBefore: objectLostBeforeLink, at: now)
        // The chain goes on when this is the retry of its latest failure, on its adapter, with
        // nothing else in between.
        var chain: [ExplainableFailure.Recorded] = []
        if !endedALink, let previous = explainableFailure, previous.adapter == adapter, session == previous.latest.session + 1,
            reconnectBefore == previous.reconnectAfter
        {
            chain = previous.chain
        }
        fail(failureClass, error: error, now: now, random: &random, &effects)
        chain.append(recorded)
        chain.removeFirst(max(chain.count - Self.longestExplainableChain, 0))
        while let first = chain.first, now.duration(since: first.at) > FleetStateMachine.linkLossCauseWindow { chain.removeFirst() }
        explainableFailure = ExplainableFailure(adapter: adapter, chain: chain, reconnectAfter: reconnect)
    }

    /// The fleet learned that the link or attempt last lost on `adapter` was ended by `cause`:
    /// the failure recorded for it (with the chain it ends) is taken back as if it had been an environment event
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
        guard let failure = explainableFailure, now.duration(since: failure.latest.at) <= FleetStateMachine.linkLossCauseWindow else { return }
        // The retry granted since, still connecting, or ended by its adapter or bluetoothd going
        // (no outcome of its own): nothing newer of the device's.
        let retryWithoutOutcome: Bool
        switch state {
        case .connecting(_?), .suspended(.bluetoothdUnavailable), .suspended(.noPoweredAdapter):
            retryWithoutOutcome = session == failure.latest.session + 1
        default:
            retryWithoutOutcome = false
        }
        guard failure.adapter == adapter, failure.latest.session == session || retryWithoutOutcome, reconnect == failure.reconnectAfter
        else { return }
        explainableFailure = nil
        // Failures of the chain older than the window when the cause came are not the cause's.
        let explained = failure.chain.filter { now.duration(since: $0.at) <= FleetStateMachine.linkLossCauseWindow }
        guard let earliest = explained.first else { return }
        reconnect = earliest.reconnectBefore
        needsRediscovery = earliest.needsRediscoveryBefore
        objectLostBeforeLink = earliest.objectLostBeforeLinkBefore
        // Newest first: the fleet's record of the device's last failure unwinds in that order.
        for recorded in explained.reversed() {
            effects.append(.emit(.failureWithdrawn(recorded.failureClass, cause: cause, session: recorded.session)))
        }
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
