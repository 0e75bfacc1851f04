// What an operator or another program can ask of one device through the fleet's commands:
// reconnect now, and subscriptions added or removed at run time.

extension DeviceStateMachine {
    mutating func reconnectRequested(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        reconnect.reset()
        needsRediscovery = false
        objectLostBeforeLink = false
        switch state {
        case .backingOff, .suspended(.circuitOpen), .suspended(.budgetExhausted), .suspended(.gaveUp):
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        case .idle where isWanted:
            pursue(now: now, &effects)
        case .asleep:
            // Between two pending Connects: send the next now (nothing else can be hurried).
            resumeStanding(now: now, &effects)
        default:
            // Linked, connecting or resolving already; or waiting on bluetoothd or an adapter,
            // which no retry can hurry.
            break
        }
    }

    mutating func subscriptionAdded(_ characteristic: String, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard !configuration.subscriptions.contains(characteristic) else { return }
        configuration.subscriptions.append(characteristic)
        // Before services are known the setup subscribes to it with the rest.
        guard state.isLinked, link.servicesKnown else { return }
        if link.setupFinished {
            // Missing until BlueZ confirms it, so a subscription that never comes is retried.
            link.failedSubscriptions.insert(characteristic)
            settle(now: now, &effects)
        } else {
            link.pendingSubscriptions.insert(characteristic)
        }
        effects.append(.subscribe(characteristic: characteristic, via: notifyPath))
    }

    mutating func subscriptionRemoved(_ characteristic: String, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard let index = configuration.subscriptions.firstIndex(of: characteristic) else { return }
        configuration.subscriptions.remove(at: index)
        guard state.isLinked, link.servicesKnown else { return }
        link.pendingSubscriptions.remove(characteristic)
        link.failedSubscriptions.remove(characteristic)
        effects.append(.unsubscribe(characteristic: characteristic, via: notifyPath))
        advance(now: now, &effects)
    }

    var notifyPath: DeviceEffect.NotifyPath { configuration.useFileDescriptorPath ? .acquireNotify : .startNotify }
}
