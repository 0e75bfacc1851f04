import Foundation
import Testing
import FleetCore

/// The ownership rules one at a time, as stories: a gateway's inputs in order, the actions it
/// answers with. Defaults: lease 15 s, renewal 5 s, settle 1 s, margin 8, dwell 30 s, grace 20 s,
/// bids every 5 s at most. A device heard at −60 dBm with 3 free slots bids −54.
@Suite struct OwnershipMachineTests {
    typealias F = OwnershipFixture
    let device = F.device

    /// `a` owns the device and holds its link: released at epoch 3 by someone before, claimed
    /// (epoch 4) at 20 s, echoed at 20.1 s, wanted at 21.1 s, connected at 22 s. Peer `b` is
    /// alive (heartbeats every 5 s to 20 s) and bids worse (−70).
    func ownerWithLink() -> OwnershipHarness {
        var owner = OwnershipHarness("a")
        owner.send(.brokerConnected, at: 0)
        owner.send(.claimReceived(F.claim(nil, epoch: 3)))
        owner.send(.heartbeat(F.b))
        owner.send(.bidsReceived(F.b, F.bids(-70)))
        owner.send(.heard(device, OwnershipBidInputs(rssi: -60, freeSlots: 3)))
        let claimed = owner.keepAlive(F.b, through: 20)
        #expect(claimed.claims == [F.claim(F.a, epoch: 4)])
        owner.send(.claimReceived(F.claim(F.a, epoch: 4)), at: 20.1)
        #expect(owner.tick(at: 21.1).acquires(device))
        owner.send(.linkChanged(device, linked: true), at: 22)
        return owner
    }

    // MARK: - Rule 1: precedence

    @Test func keepsTheGreatestClaimWhateverTheOrderOfArrival() {
        let claims = [
            F.claim(F.a, epoch: 1), F.claim(F.b, epoch: 1), F.claim(nil, epoch: 2), F.claim(F.a, epoch: 2),
            F.claim(F.a, epoch: 2, revision: 1, linked: true),
        ]
        let expected = F.claim(F.a, epoch: 2, revision: 1, linked: true)
        var orders = 0
        for order in permutations(of: Array(claims.indices)) {
            var gateway = OwnershipHarness("c")
            gateway.send(.brokerConnected, at: 0)
            for index in order { gateway.send(.claimReceived(claims[index])) }
            #expect(gateway.machine.greatestClaim(for: device) == expected, "order \(order)")
            orders += 1
        }
        #expect(orders == 120)
    }

    @Test func aReleaseRanksBelowAClaimOfTheSameEpoch() {
        #expect(F.claim(nil, epoch: 3).precedence < F.claim(F.a, epoch: 3).precedence)
        #expect(F.claim(F.b, epoch: 3).precedence < F.claim(nil, epoch: 4).precedence)
        #expect(F.claim(F.a, epoch: 3).precedence < F.claim(F.b, epoch: 3).precedence)
    }

    @Test func aStaleClaimWithALowerEpochLosesAndTheWinnerWritesItsClaimAgain() {
        var owner = ownerWithLink()
        let current = owner.machine.greatestClaim(for: device)
        let actions = owner.send(.claimReceived(F.claim(F.c, epoch: 2)), at: 23)
        #expect(owner.machine.owner(of: device)?.gateway == F.a)
        // The broker may now retain the stale claim: the winner writes its own again.
        #expect(actions.claims == [current].compactMap { $0 })
        #expect(!actions.releases(device))
    }

    @Test func aGatewayThatDidNotWinDoesNotRepublishTheWinner() {
        var bystander = OwnershipHarness("c")
        bystander.send(.brokerConnected, at: 0)
        bystander.send(.claimReceived(F.claim(F.a, epoch: 2)))
        #expect(bystander.send(.claimReceived(F.claim(F.b, epoch: 1))).claims.isEmpty)
    }

    // MARK: - Rule 2: claiming

    /// A device nobody live owns, heard anew, is bid for after `settle`, not after the 5 s bid
    /// interval: a dead gateway's devices are handed over without waiting for it.
    @Test func aNewlyHeardUnownedDeviceIsBidForWithoutWaitingTheBidInterval() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(F.other, at: 0)
        #expect(gateway.tick(at: 1).publishedBids == [[F.other: OwnershipBid(score: -54)]])
        let heard = gateway.send(.heard(device, OwnershipBidInputs(rssi: -60, freeSlots: 3)), at: 1.5)
        #expect(heard.publishedBids.isEmpty, "not before `settle` since the last bids")
        #expect(gateway.tick(at: 2).publishedBids.first?[device] != nil, "after `settle`, not the 5 s interval")
        // A reading that only moves a published bid waits for the interval.
        #expect(gateway.send(.heard(device, OwnershipBidInputs(rssi: -40, freeSlots: 3)), at: 3).publishedBids.isEmpty)
        #expect(gateway.tick(at: 6.9).publishedBids.isEmpty)
        #expect(gateway.tick(at: 7).publishedBids.first?[device] != nil, "the interval after the last bids")
    }

    @Test func claimsAnUnownedDeviceOnlyAfterTheResyncGrace() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        #expect(gateway.tick(at: 19.9).claims.isEmpty)
        #expect(gateway.tick(at: 20).claims == [F.claim(F.b, epoch: 1)])
    }

    @Test func claimsNothingWhileDisconnectedFromTheBroker() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.send(.brokerLost, at: 10)
        #expect(gateway.tick(at: 60).claims.isEmpty)
        #expect(gateway.send(.heard(device, OwnershipBidInputs(rssi: -50, freeSlots: 3)), at: 61).isEmpty)
    }

    @Test func defersToABetterLiveBidderAndClaimsOnceItLapses() {
        var gateway = OwnershipHarness("b")
        gateway.send(.brokerConnected, at: 0)
        gateway.send(.heartbeat(F.a))
        gateway.send(.bidsReceived(F.a, F.bids(-40)))
        gateway.send(.heard(device, OwnershipBidInputs(rssi: -60, freeSlots: 3)))
        for second in stride(from: 5.0, through: 19, by: 5) { gateway.send(.heartbeat(F.a), at: second) }
        #expect(gateway.tick(at: 20).claims.isEmpty)
        // `a`'s last heartbeat came at 15 s: it lapses at 30 s on this gateway's clock.
        #expect(gateway.tick(at: 29.9).claims.isEmpty)
        #expect(gateway.tick(at: 30).claims == [F.claim(F.b, epoch: 1)])
    }

    @Test func aTieInBidsGoesToTheGreaterGatewayName() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, rssi: -60, at: 0)
        gateway.send(.heartbeat(F.c))
        gateway.send(.bidsReceived(F.c, F.bids(-54)))
        gateway.send(.heartbeat(F.a))
        gateway.send(.bidsReceived(F.a, F.bids(-54)))
        #expect(gateway.keepAlive(F.c, through: 20).claims.isEmpty)
        var greatest = OwnershipHarness("c")
        greatest.connectAndHear(device, rssi: -60, at: 0)
        greatest.send(.heartbeat(F.b))
        greatest.send(.bidsReceived(F.b, F.bids(-54)))
        #expect(greatest.keepAlive(F.b, through: 20).claims == [F.claim(F.c, epoch: 1)])
    }

    @Test func claimsOverAnOwnerWhoseWillCameWithTheNextEpoch() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.send(.heartbeat(F.a))
        gateway.send(.claimReceived(F.claim(F.a, epoch: 4, linked: true)))
        for second in stride(from: 5.0, through: 20, by: 5) { gateway.send(.heartbeat(F.a), at: second) }
        #expect(gateway.tick(at: 20).claims.isEmpty)
        // The Will counts once it has stood for `settle` (1 s) with this gateway connected.
        #expect(gateway.send(.gatewayOffline(F.a), at: 21).claims.isEmpty)
        #expect(gateway.tick(at: 21.9).claims.isEmpty)
        #expect(gateway.tick(at: 22).claims == [F.claim(F.b, epoch: 5)])
    }

    /// A broker shutting down sends every client's Will, then drops the connections: the Wills
    /// of peers that are alive must not hand their devices over.
    @Test func aWillFollowedByTheLossOfTheBrokerIsForgotten() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.send(.heartbeat(F.a))
        gateway.send(.claimReceived(F.claim(F.a, epoch: 4, linked: true)))
        for second in stride(from: 5.0, through: 20, by: 5) { gateway.send(.heartbeat(F.a), at: second) }
        gateway.send(.gatewayOffline(F.a), at: 21)
        #expect(gateway.send(.brokerLost, at: 21.2).claims.isEmpty)
        gateway.send(.brokerConnected, at: 25)
        for second in stride(from: 25.5, through: 45.5, by: 5) { gateway.send(.heartbeat(F.a), at: second) }
        #expect(!gateway.machine.isLapsed(F.a, now: OwnershipHarness.instant(46)), "a's Will was forgotten; a is alive")
        #expect(gateway.tick(at: 46).claims.isEmpty, "past the resync grace, a's claim stands")
    }

    @Test func claimsADeviceItsOwnerReleased() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.send(.claimReceived(F.claim(nil, epoch: 6)))
        #expect(gateway.tick(at: 20).claims == [F.claim(F.b, epoch: 7)])
    }

    // MARK: - Rule 3: settle before linking

    @Test func linksOnlyOnceItsClaimCameBackAndStoodForSettle() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        let claimed = gateway.tick(at: 20)
        #expect(claimed.claims == [F.claim(F.b, epoch: 1)] && !claimed.acquires(device))
        // Settle counts from the echo, not from the publication.
        #expect(gateway.tick(at: 20.2).isEmpty)
        gateway.send(.claimReceived(F.claim(F.b, epoch: 1)), at: 20.3)
        #expect(gateway.scheduledTick == OwnershipHarness.instant(21.3))
        #expect(!gateway.tick(at: 21.29).acquires(device))
        #expect(gateway.tick(at: 21.3).acquires(device))
    }

    @Test func aGreaterClaimForAnotherGatewayStopsItAtOnce() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.tick(at: 20)
        gateway.send(.claimReceived(F.claim(F.b, epoch: 1)), at: 20.1)
        #expect(gateway.tick(at: 21.1).acquires(device))
        gateway.send(.heartbeat(F.c), at: 21.4)
        let actions = gateway.send(.claimReceived(F.claim(F.c, epoch: 1)), at: 21.5)
        #expect(actions.releases(device))
        #expect(!gateway.machine.isOwnedHere(device))
    }

    @Test func aGreaterClaimDuringSettleMeansItNeverLinks() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.tick(at: 20)
        gateway.send(.claimReceived(F.claim(F.b, epoch: 1)), at: 20.1)
        gateway.send(.heartbeat(F.c), at: 20.4)
        #expect(gateway.send(.claimReceived(F.claim(F.c, epoch: 1)), at: 20.5).isEmpty)
        #expect(!gateway.tick(at: 21.1).acquires(device))
    }

    // MARK: - Rule 4: handoff by a better bid

    @Test func theOwnerHandsOverOnlyAfterDwellAndPublishesTheSuccessorOnlyOnceTheLinkIsDown() {
        var owner = ownerWithLink()
        #expect(owner.machine.greatestClaim(for: device) == F.claim(F.a, epoch: 4, revision: 1, linked: true))
        owner.send(.heartbeat(F.b), at: 25)
        owner.send(.bidsReceived(F.b, F.bids(-40)))
        let waiting = owner.keepAlive(F.b, through: 54.9)
        #expect(!waiting.releases(device) && waiting.claims.isEmpty)
        let yielded = owner.tick(at: 55)
        #expect(yielded.releases(device))
        #expect(yielded.claims.isEmpty, "the successor's claim waits for the link to go down")
        let down = owner.send(.linkChanged(device, linked: false), at: 55.4)
        #expect(down.claims == [F.claim(F.b, epoch: 5)])
        #expect(!owner.machine.isOwnedHere(device))
    }

    @Test func aChallengeThatLapsesBeforeDwellStartsOver() {
        var owner = ownerWithLink()
        owner.send(.heartbeat(F.b), at: 25)
        owner.send(.bidsReceived(F.b, F.bids(-40)))
        var actions = owner.keepAlive(F.b, through: 40)
        owner.send(.bidsReceived(F.b, F.bids(-50)))  // beats −54 by 4: within the margin
        actions += owner.keepAlive(F.b, through: 45)
        owner.send(.bidsReceived(F.b, F.bids(-40)))
        actions += owner.keepAlive(F.b, through: 74.9)
        #expect(!actions.releases(device))
        #expect(owner.tick(at: 75).releases(device))
    }

    @Test func aBetterBidFromALapsedGatewayNeverTakesTheDevice() {
        var owner = ownerWithLink()
        owner.send(.bidsReceived(F.b, F.bids(-30)), at: 25)
        owner.send(.gatewayOffline(F.b), at: 26)
        #expect(!owner.tick(at: 60).releases(device))
    }

    @Test func theSuccessorConnectsAfterSettle() {
        var successor = OwnershipHarness("b")
        successor.connectAndHear(device, at: 0)
        successor.send(.heartbeat(F.a))
        successor.send(.claimReceived(F.claim(F.a, epoch: 1, revision: 1, linked: true)))
        #expect(successor.keepAlive(F.a, through: 29).claims.isEmpty)
        successor.send(.claimReceived(F.claim(F.b, epoch: 2)), at: 30)
        #expect(successor.machine.isOwnedHere(device))
        #expect(!successor.tick(at: 30.9).acquires(device))
        #expect(successor.tick(at: 31).acquires(device))
        #expect(successor.send(.linkChanged(device, linked: true), at: 32).claims == [F.claim(F.b, epoch: 2, revision: 1, linked: true)])
    }

    // MARK: - Rule 5: fail-static, resync grace, reconciliation

    /// A restarted gateway (or a new coordinator) finds links up before its first connection:
    /// nothing is released while the claims are unknown; once connected, the link holder claims
    /// what nobody owns and keeps the link.
    @Test func aLinkReportedBeforeTheFirstConnectionIsKeptAndClaimed() {
        var gateway = OwnershipHarness("a")
        let early = gateway.send(.linkChanged(device, linked: true), at: 0)
        #expect(!early.releases(device), "\(early)")
        gateway.send(.heard(device, OwnershipBidInputs(rssi: -60, freeSlots: 3)), at: 0.5)
        let connected = gateway.send(.brokerConnected, at: 1)
        #expect(connected.acquires(device) && !connected.releases(device), "\(connected)")
        #expect(gateway.tick(at: 21).claims == [F.claim(F.a, epoch: 1, linked: true)], "past the grace, the holder claims it")
    }

    @Test func losingTheBrokerKeepsTheLinkAndClaimsNothing() {
        var owner = ownerWithLink()
        owner.send(.heard(F.other, OwnershipBidInputs(rssi: -50, freeSlots: 3)), at: 23)
        #expect(owner.send(.brokerLost, at: 24).isEmpty)
        #expect(owner.tick(at: 300).isEmpty)
        #expect(owner.machine.wantsLink(to: device))
    }

    /// Fail-static keeps what the fleet was told: an owned device whose link dropped (or was
    /// being made) when the broker went is still tried, since nobody can claim it meanwhile but
    /// a gateway cut off with it (a partition, where the peripheral's one link decides).
    @Test func losingTheBrokerKeepsTryingToConnectAnOwnedDevice() {
        var owner = ownerWithLink()
        owner.send(.linkChanged(device, linked: false), at: 23)
        #expect(!owner.send(.brokerLost, at: 24).releases(device))
        #expect(owner.machine.wantsLink(to: device))
        // Back, the claim is re-published, truthful about the link, and the link still wanted.
        let back = owner.send(.brokerConnected, at: 40)
        #expect(back.claims == [F.claim(F.a, epoch: 4, revision: 2, linked: false)])
        #expect(!back.releases(device) && owner.machine.wantsLink(to: device))
    }

    @Test func countsNoLapseWhileDisconnectedAndWaitsTheGraceAfterReconnecting() {
        var gateway = OwnershipHarness("b")
        gateway.connectAndHear(device, at: 0)
        gateway.send(.heartbeat(F.a))
        gateway.send(.claimReceived(F.claim(F.a, epoch: 1, linked: true)))
        gateway.send(.heartbeat(F.a), at: 5)
        gateway.send(.brokerLost, at: 8)
        gateway.send(.brokerConnected, at: 100)
        // `a` was last heard at 5 s; the time without the broker does not count, so `a` lapses
        // at 115 s, and the grace holds the claim back to 120 s.
        #expect(!gateway.machine.isLapsed(F.a, now: OwnershipHarness.instant(114.9)))
        #expect(gateway.machine.isLapsed(F.a, now: OwnershipHarness.instant(115)))
        #expect(gateway.tick(at: 115).claims.isEmpty)
        #expect(gateway.tick(at: 120).claims == [F.claim(F.b, epoch: 2)])
    }

    @Test func republishesItsClaimsWithTheTruthfulLinkStateOnReconnecting() {
        var owner = ownerWithLink()
        owner.send(.brokerLost, at: 30)
        let back = owner.send(.brokerConnected, at: 90)
        #expect(back.claims == [F.claim(F.a, epoch: 4, revision: 1, linked: true)])
        #expect(back.contains(.publishHeartbeat))
        #expect(back.publishedBids.count == 1)
        #expect(!back.releases(device))
    }

    @Test func theHolderOfTheRealLinkWinsOverAClaimWithoutALink() {
        var holder = ownerWithLink()
        holder.send(.brokerLost, at: 30)
        holder.send(.brokerConnected, at: 90)
        // While `a` was away, `b` claimed the device but could not connect it.
        let actions = holder.send(.claimReceived(F.claim(F.b, epoch: 5)), at: 90.1)
        #expect(actions.claims == [F.claim(F.a, epoch: 6, linked: true)])
        #expect(!actions.releases(device))
        #expect(holder.machine.isOwnedHere(device))
    }

    @Test func releasesALinkWhenTheWinningClaimSaysAnotherGatewayHoldsIt() {
        var holder = ownerWithLink()
        holder.send(.brokerLost, at: 30)
        holder.send(.brokerConnected, at: 90)
        let actions = holder.send(.claimReceived(F.claim(F.b, epoch: 5, revision: 1, linked: true)), at: 90.1)
        #expect(actions.releases(device) && actions.claims.isEmpty)
    }

    @Test func keepsALinkItHoldsWithoutAClaimUntilTheGraceAndThenClaimsIt() {
        var gateway = OwnershipHarness("b")
        gateway.send(.brokerConnected, at: 0)
        // The fleet adopted a link that outlived a restart of the daemon.
        #expect(gateway.send(.linkChanged(device, linked: true), at: 1) == [.acquire(device)])
        #expect(gateway.tick(at: 20).claims == [F.claim(F.b, epoch: 1, linked: true)])
    }

    @Test func releasesALinkTheFleetMadeUnaskedForADeviceAnotherGatewayHolds() {
        var gateway = OwnershipHarness("b")
        gateway.send(.brokerConnected, at: 0)
        gateway.send(.heartbeat(F.a))
        gateway.send(.claimReceived(F.claim(F.a, epoch: 2, revision: 1, linked: true)))
        #expect(gateway.send(.linkChanged(device, linked: true), at: 1) == [.release(device)])
    }

    // MARK: - Rule 6: a broker restart hands nothing over

    @Test func aBrokerRestartThatLostTheRetainedClaimsHandsNothingOver() {
        var owner = ownerWithLink()
        var other = OwnershipHarness("b")
        other.connectAndHear(device, rssi: -50, at: 0)
        other.send(.heartbeat(F.a))
        other.send(.claimReceived(F.claim(F.a, epoch: 4, revision: 1, linked: true)))
        #expect(other.keepAlive(F.a, through: 30).claims.isEmpty)
        other.send(.brokerLost)
        owner.send(.brokerLost, at: 30)
        // The broker is back empty; `b` reconnects first, `a` 3 s later and re-publishes.
        other.send(.brokerConnected, at: 40)
        let republished = owner.send(.brokerConnected, at: 43)
        for claim in republished.claims { other.send(.claimReceived(claim), at: 43.1) }
        other.send(.heartbeat(F.a), at: 43.1)
        let actions = other.keepAlive(F.a, through: 90)
        #expect(actions.claims.isEmpty && !actions.acquires(device))
        #expect(other.machine.owner(of: device)?.gateway == F.a)
    }

    // MARK: - Rule 7: linked stays truthful

    @Test func theOwnerPublishesANewRevisionWhenItsLinkChanges() {
        var owner = ownerWithLink()
        #expect(owner.send(.linkChanged(device, linked: false), at: 30).claims == [F.claim(F.a, epoch: 4, revision: 2)])
        #expect(owner.send(.linkChanged(device, linked: true), at: 31).claims == [F.claim(F.a, epoch: 4, revision: 3, linked: true)])
        // A late copy of an older revision does not undo the newer one.
        owner.send(.claimReceived(F.claim(F.a, epoch: 4, revision: 2)), at: 32)
        #expect(owner.machine.owner(of: device)?.linked == true)
    }

    // MARK: - Rule 8: preferred gateways

    @Test func aPreferredGatewayBidsWithTheBonus() {
        let configuration = OwnershipConfiguration(preferredGateways: [device: [F.b]])
        var preferred = OwnershipHarness("b", configuration: configuration)
        preferred.connectAndHear(device, rssi: -60, at: 0)
        #expect(preferred.tick(at: 5).publishedBids == [F.bids(-42)])
        var plain = OwnershipHarness("c", configuration: configuration)
        plain.connectAndHear(device, rssi: -60, at: 0)
        #expect(plain.tick(at: 5).publishedBids == [F.bids(-54)])
    }

    @Test func aPreferredGatewayWinsUnlessClearlyWorse() {
        let scoring = OwnershipScoring()
        let preferred = scoring.score(smoothedRSSI: -68, freeSlots: 3, recentFailures: 0, preferred: true)
        let nearer = scoring.score(smoothedRSSI: -60, freeSlots: 3, recentFailures: 0, preferred: false)
        let muchNearer = scoring.score(smoothedRSSI: -45, freeSlots: 3, recentFailures: 0, preferred: false)
        #expect(preferred > nearer)
        #expect(muchNearer > preferred + OwnershipConfiguration().margin)
    }

    // MARK: - Rule 9: letting go of a device nobody here hears

    @Test func releasesADeviceItNeitherHearsNorHoldsAfterTheLease() {
        var owner = ownerWithLink()
        owner.send(.notHeard(device), at: 30)
        owner.send(.linkChanged(device, linked: false), at: 31)
        #expect(owner.tick(at: 45.9).claims.isEmpty)
        let released = owner.tick(at: 46)
        #expect(released.claims == [F.claim(nil, epoch: 5)])
        #expect(released.releases(device))
    }

    @Test func keepsADeviceItHoldsAlthoughItHearsNoAdvertisements() {
        var owner = ownerWithLink()
        owner.send(.notHeard(device), at: 30)
        #expect(owner.tick(at: 100).claims.isEmpty)
    }

    // MARK: - Messages of the gateway itself

    @Test func sendsAHeartbeatEveryRenewalAndAtOnceAfterItsOwnWill() {
        var gateway = OwnershipHarness("a")
        #expect(gateway.send(.brokerConnected, at: 0).contains(.publishHeartbeat))
        #expect(!gateway.tick(at: 4.9).contains(.publishHeartbeat))
        #expect(gateway.tick(at: 5).contains(.publishHeartbeat))
        #expect(gateway.send(.gatewayOffline(F.a), at: 6).contains(.publishHeartbeat))
    }

    @Test func publishesBidsOnlyWhenTheyMoveBeyondHysteresisAndAtMostEveryBidInterval() {
        var gateway = OwnershipHarness("a")
        gateway.send(.brokerConnected, at: 0)
        // Owned by a live peer: a bid that challenges, not one that could claim (which would go
        // out after `settle`).
        gateway.send(.heartbeat(F.b))
        gateway.send(.claimReceived(F.claim(F.b, epoch: 1, linked: true)))
        #expect(gateway.send(.heard(device, OwnershipBidInputs(rssi: -60, freeSlots: 3)), at: 1).publishedBids.isEmpty)
        #expect(gateway.tick(at: 5).publishedBids == [F.bids(-54)])
        // Noise within the hysteresis publishes nothing.
        for (second, rssi) in [(6.0, -62), (7, -58), (8, -61), (9, -59)] {
            #expect(gateway.send(.heard(device, OwnershipBidInputs(rssi: rssi, freeSlots: 3)), at: second).publishedBids.isEmpty)
        }
        #expect(gateway.tick(at: 20).publishedBids.isEmpty)
        // A real move is published, but not sooner than the interval after the last message.
        var moved: [[DeviceID: OwnershipBid]] = []
        for second in stride(from: 21.0, through: 24, by: 1) {
            moved += gateway.send(.heard(device, OwnershipBidInputs(rssi: -80, freeSlots: 3)), at: second).publishedBids
        }
        #expect(moved.count == 1)
        moved = gateway.send(.heard(device, OwnershipBidInputs(rssi: -90, freeSlots: 3)), at: 25).publishedBids
        #expect(moved.isEmpty)
        #expect(gateway.tick(at: 26).publishedBids.count == 1, "the move waits out the interval from 21 s")
        #expect(gateway.send(.notHeard(device), at: 27).publishedBids.isEmpty)
        #expect(gateway.tick(at: 31).publishedBids == [[:]], "losing the device is a move too")
    }

    // MARK: - The wire

    @Test func claimsEncodeWithShortStableFieldsAndRoundTrip() throws {
        let claim = F.claim(F.a, epoch: 7, revision: 1, linked: true)
        let text = String(decoding: try JSONEncoder.sorted.encode(claim), as: UTF8.self)
        #expect(text == #"{"dev":"00:00:00:00:00:01","ep":7,"gw":"a","linked":true,"rev":1}"#)
        #expect(try JSONDecoder().decode(OwnerClaim.self, from: Data(text.utf8)) == claim)
        let release = String(decoding: try JSONEncoder.sorted.encode(F.claim(nil, epoch: 8)), as: UTF8.self)
        #expect(release == #"{"dev":"00:00:00:00:00:01","ep":8,"linked":false,"rev":0}"#)
        let minimal = #"{"dev":"00:00:00:00:00:01/random","gw":"b","ep":2,"linked":false}"#
        let decoded = try JSONDecoder().decode(OwnerClaim.self, from: Data(minimal.utf8))
        #expect(decoded.revision == 0 && decoded.device.addressType == .random && decoded.gateway == F.b)
    }

    @Test func bidsAndLivenessEncodeWithShortStableFieldsAndRoundTrip() throws {
        let bids = OwnershipBids(gateway: F.b, bids: [F.other: OwnershipBid(score: -50.5), device: OwnershipBid(score: -61)])
        let text = String(decoding: try JSONEncoder.sorted.encode(bids), as: UTF8.self)
        #expect(text == #"{"bids":[{"dev":"00:00:00:00:00:01","s":-61},{"dev":"00:00:00:00:00:02","s":-50.5}],"gw":"b"}"#)
        #expect(try JSONDecoder().decode(OwnershipBids.self, from: Data(text.utf8)) == bids)
        let will = String(decoding: try JSONEncoder.sorted.encode(GatewayLiveness(gateway: F.a, alive: false)), as: UTF8.self)
        #expect(will == #"{"alive":false,"gw":"a"}"#)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(OwnerClaim.self, from: Data(#"{"dev":"nonsense","ep":1,"linked":false}"#.utf8))
        }
    }

    @Test func clampsAnInconsistentConfiguration() {
        let configuration = OwnershipConfiguration(lease: .seconds(1), renewal: .seconds(5), resyncGrace: .seconds(2))
        #expect(configuration.lease == .seconds(10))
        #expect(configuration.resyncGrace == .seconds(10))
        #expect(OwnershipConfiguration().resyncGrace == .seconds(20))
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

/// Every order of `items` (Heap's algorithm).
func permutations<T>(of items: [T]) -> [[T]] {
    var items = items
    var result: [[T]] = []
    func generate(_ count: Int) {
        guard count > 1 else {
            result.append(items)
            return
        }
        for index in 0..<count {
            generate(count - 1)
            items.swapAt(count % 2 == 0 ? index : 0, count - 1)
        }
    }
    generate(items.count)
    return result
}
