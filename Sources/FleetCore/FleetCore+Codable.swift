// The recorded form of FleetCore's inputs (see `wearfleetctl replay`). Most types declare
// `Codable` where they are declared, so the compiler synthesizes it (it can only there). Here
// are the rest: enums recorded by their raw values, and the settings whose initializers clamp
// inconsistent values. Those decode through their initializer, so a damaged or hand-made record
// can never give a machine settings the daemon itself could not have run with.

extension DeviceStateMachine.TimerKind: Codable {}
extension FailureClass: Codable, CodingKeyRepresentable {}
extension OutgoingQoS: Codable {}

// MARK: - Settings decoded through their initializers

extension DeviceStateMachine.Configuration: Codable {
    private enum CodingKeys: String, CodingKey {
        case requiredServices, requiredCharacteristics, readOnConnect, subscriptions, useFileDescriptorPath, timeouts
        case writeFailureThreshold, bond, intermittent, setTime
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            requiredServices: try values.decode(Set<String>.self, forKey: .requiredServices),
            requiredCharacteristics: try values.decode(Set<String>.self, forKey: .requiredCharacteristics),
            readOnConnect: try values.decode([String].self, forKey: .readOnConnect),
            subscriptions: try values.decode([String].self, forKey: .subscriptions),
            useFileDescriptorPath: try values.decode(Bool.self, forKey: .useFileDescriptorPath),
            timeouts: try values.decode(DeviceStateMachine.Timeouts.self, forKey: .timeouts),
            writeFailureThreshold: try values.decode(Int.self, forKey: .writeFailureThreshold),
            // Absent from recordings made before measurement devices: off, as those daemons ran.
            bond: try values.decodeIfPresent(Bool.self, forKey: .bond) ?? false,
            intermittent: try values.decodeIfPresent(Bool.self, forKey: .intermittent) ?? false,
            setTime: try values.decodeIfPresent(Bool.self, forKey: .setTime) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(requiredServices.sorted(), forKey: .requiredServices)
        try values.encode(requiredCharacteristics.sorted(), forKey: .requiredCharacteristics)
        try values.encode(readOnConnect, forKey: .readOnConnect)
        try values.encode(subscriptions, forKey: .subscriptions)
        try values.encode(useFileDescriptorPath, forKey: .useFileDescriptorPath)
        try values.encode(timeouts, forKey: .timeouts)
        try values.encode(writeFailureThreshold, forKey: .writeFailureThreshold)
        try values.encode(bond, forKey: .bond)
        try values.encode(intermittent, forKey: .intermittent)
        try values.encode(setTime, forKey: .setTime)
    }
}

extension ReconnectPolicy: Codable {
    private enum CodingKeys: String, CodingKey {
        case baseDelay, maxDelay, multiplier, jitterFraction, fastFirstRetryDelay, stablePeriod, budgets, giveUpClasses
        case budgetCooldown, breakerThreshold, breakerCooldown, breakerCooldownMultiplier, breakerMaxCooldown
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            baseDelay: try values.decode(Duration.self, forKey: .baseDelay),
            maxDelay: try values.decode(Duration.self, forKey: .maxDelay),
            multiplier: try values.decode(Double.self, forKey: .multiplier),
            jitterFraction: try values.decode(Double.self, forKey: .jitterFraction),
            fastFirstRetryDelay: try values.decode(Duration.self, forKey: .fastFirstRetryDelay),
            stablePeriod: try values.decode(Duration.self, forKey: .stablePeriod),
            budgets: try values.decode([FailureClass: Int].self, forKey: .budgets),
            giveUpClasses: try values.decode(Set<FailureClass>.self, forKey: .giveUpClasses),
            budgetCooldown: try values.decode(Duration.self, forKey: .budgetCooldown),
            breakerThreshold: try values.decode(Int.self, forKey: .breakerThreshold),
            breakerCooldown: try values.decode(Duration.self, forKey: .breakerCooldown),
            breakerCooldownMultiplier: try values.decode(Double.self, forKey: .breakerCooldownMultiplier),
            breakerMaxCooldown: try values.decode(Duration.self, forKey: .breakerMaxCooldown))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(baseDelay, forKey: .baseDelay)
        try values.encode(maxDelay, forKey: .maxDelay)
        try values.encode(multiplier, forKey: .multiplier)
        try values.encode(jitterFraction, forKey: .jitterFraction)
        try values.encode(fastFirstRetryDelay, forKey: .fastFirstRetryDelay)
        try values.encode(stablePeriod, forKey: .stablePeriod)
        try values.encode(budgets, forKey: .budgets)
        try values.encode(giveUpClasses.sorted { $0.rawValue < $1.rawValue }, forKey: .giveUpClasses)
        try values.encode(budgetCooldown, forKey: .budgetCooldown)
        try values.encode(breakerThreshold, forKey: .breakerThreshold)
        try values.encode(breakerCooldown, forKey: .breakerCooldown)
        try values.encode(breakerCooldownMultiplier, forKey: .breakerCooldownMultiplier)
        try values.encode(breakerMaxCooldown, forKey: .breakerMaxCooldown)
    }
}

extension PoolConfiguration: Codable {
    private enum CodingKeys: String, CodingKey {
        case maxConnections, defaultSlotsPerAdapter, slotOverrides, minimumDwell, scoreMargin, weights, attemptRateLimit
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            maxConnections: try values.decode(Int.self, forKey: .maxConnections),
            defaultSlotsPerAdapter: try values.decode(Int.self, forKey: .defaultSlotsPerAdapter),
            slotOverrides: try values.decode([AdapterID: Int].self, forKey: .slotOverrides),
            minimumDwell: try values.decode(Duration.self, forKey: .minimumDwell),
            scoreMargin: try values.decode(Double.self, forKey: .scoreMargin),
            weights: try values.decode(PoolScoreWeights.self, forKey: .weights),
            attemptRateLimit: try values.decode(AttemptRateLimit.self, forKey: .attemptRateLimit))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(maxConnections, forKey: .maxConnections)
        try values.encode(defaultSlotsPerAdapter, forKey: .defaultSlotsPerAdapter)
        try values.encode(slotOverrides, forKey: .slotOverrides)
        try values.encode(minimumDwell, forKey: .minimumDwell)
        try values.encode(scoreMargin, forKey: .scoreMargin)
        try values.encode(weights, forKey: .weights)
        try values.encode(attemptRateLimit, forKey: .attemptRateLimit)
    }
}

extension AttemptRateLimit: Codable {
    private enum CodingKeys: String, CodingKey { case burst, refillInterval }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            burst: try values.decode(Int.self, forKey: .burst), refillInterval: try values.decode(Duration.self, forKey: .refillInterval))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(burst, forKey: .burst)
        try values.encode(refillInterval, forKey: .refillInterval)
    }
}

extension OutgoingDeviceOptions: Codable {
    private enum CodingKeys: String, CodingKey { case coalescingWindow, queueCapacities, maxInFlightWithResponse }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            coalescingWindow: try values.decodeIfPresent(Duration.self, forKey: .coalescingWindow),
            queueCapacities: try values.decode([OutgoingQoS: Int].self, forKey: .queueCapacities),
            maxInFlightWithResponse: try values.decodeIfPresent(Int.self, forKey: .maxInFlightWithResponse))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encodeIfPresent(coalescingWindow, forKey: .coalescingWindow)
        try values.encode(queueCapacities, forKey: .queueCapacities)
        try values.encodeIfPresent(maxInFlightWithResponse, forKey: .maxInFlightWithResponse)
    }
}

extension MonotonicInstant: Codable {
    /// Recorded as its nanoseconds (CLOCK_MONOTONIC's in the daemon).
    public init(from decoder: any Decoder) throws {
        self.init(nanoseconds: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(nanoseconds)
    }
}
