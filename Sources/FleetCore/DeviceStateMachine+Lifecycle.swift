// The shared moves every handler builds on: start pursuing a connection, release what the current
// state holds, turn a failure into the reconnect controller's decision, and manage timers.

extension DeviceStateMachine {
    /// Whether teardown must actively end the attempt or link, or BlueZ already did.
    enum LinkRelease {
        case release
        case alreadyGone
    }

    /// Moves to the first state on the way to `ready` that the environment allows.
    mutating func pursue(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard isWanted else {
            state = .idle
            return
        }
        guard bluetoothdPresent else {
            state = .suspended(.bluetoothdUnavailable)
            return
        }
        guard !poweredAdapters.isEmpty else {
            state = .suspended(.noPoweredAdapter)
            return
        }
        if case .open(let until) = reconnect.breaker, now < until {
            state = .suspended(.circuitOpen(until: until))
            arm(.suspension, at: until, &effects)
            return
        }
        reconnect.beginProbe(now: now)
        if configuration.intermittent {
            waitForWake(now: now, &effects)
        } else if knownAdapter == nil || needsRediscovery {
            state = .resolving
            effects.append(.startResolve)
            arm(.resolve, at: now + configuration.timeouts.resolve, &effects)
        } else {
            state = .connecting(adapter: nil)
            effects.append(.requestAttempt)
        }
    }

    /// Releases whatever the current state holds: timers, a resolve, a queued or in-flight
    /// attempt, a link. Leaves `state` for the caller to set.
    mutating func teardown(
        _ release: LinkRelease,
        attemptOutcome: DeviceEffect.AttemptOutcome,
        _ effects: inout [DeviceEffect]
    ) {
        disarmAll(&effects)
        switch state {
        case .resolving:
            effects.append(.stopResolve)
        case .connecting(adapter: nil):
            effects.append(.withdrawAttemptRequest)
        case .connecting(let adapter?):
            if release == .release { effects.append(.cancelConnect) }
            effects.append(.attemptFinished(adapter: adapter, outcome: attemptOutcome))
        case .discovering, .pairing, .ready, .degraded:
            if release == .release { effects.append(.disconnect) }
        case .asleep:
            switch standby {
            case .searching: effects.append(.stopResolve)
            case .awaitingGrant: effects.append(.withdrawAttemptRequest)
            case .connecting(let adapter):
                if release == .release { effects.append(.cancelConnect) }
                effects.append(.standingEnded(adapter: adapter))
            case .pausing(let adapter): effects.append(.standingEnded(adapter: adapter))
            case .none: break
            }
        case .idle, .backingOff, .suspended:
            break
        }
        standby = .none
        linkAdapter = nil
        link = LinkProgress()
    }

    /// Records a failure and moves to what the reconnect controller decides. Call after teardown.
    mutating func fail(
        _ failureClass: FailureClass,
        error: DeviceEvent.Failure?,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        effects.append(.emit(.failed(failureClass, error: error, session: session)))
        // A newer failure: the one kept for the fleet to explain is no longer the latest, and
        // taking it back now would undo this one too (`failExplainably` keeps this one instead).
        explainableFailure = nil
        // "In a row" means nothing else ended an attempt in between.
        objectLostBeforeLink = false
        switch reconnect.recordFailure(failureClass, now: now, random: &random) {
        case .retry(let deadline, let attempt, let rediscover):
            if rediscover { needsRediscovery = true }
            state = .backingOff(attempt: attempt, deadline: deadline)
            arm(.backoff, at: deadline, &effects)
        case .suspend(let until, .circuitOpen):
            state = .suspended(.circuitOpen(until: until))
            arm(.suspension, at: until, &effects)
        case .suspend(let until, .budgetExhausted(let exhausted)):
            state = .suspended(.budgetExhausted(exhausted, until: until))
            arm(.suspension, at: until, &effects)
        case .giveUp(let exhausted):
            state = .suspended(.gaveUp(exhausted))
        }
    }

    // MARK: - Timers

    mutating func arm(_ kind: TimerKind, at deadline: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        let generation = nextTimerGeneration
        nextTimerGeneration &+= 1
        armedTimers[kind] = generation
        effects.append(.scheduleTimer(kind, generation: generation, deadline: deadline))
    }

    mutating func disarm(_ kind: TimerKind, _ effects: inout [DeviceEffect]) {
        if armedTimers.removeValue(forKey: kind) != nil {
            effects.append(.cancelTimer(kind))
        }
    }

    mutating func disarmAll(_ effects: inout [DeviceEffect]) {
        // In declaration order, so the effects are deterministic.
        for kind in TimerKind.allCases { disarm(kind, &effects) }
    }
}
