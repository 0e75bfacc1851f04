/// The standing faults of one device, or of the whole fleet (then each device's own settings
/// override them field by field).
public struct FaultSettings: Codable, Sendable, Hashable {
    /// The `org.bluez.Error.Failed` text a failing `Connect` returns (`le-connection-abort-by-local`).
    public var connectFailure: String?
    /// How often a `Connect` fails with `connectFailure`, 0…1.
    public var connectFailureProbability: Double?
    /// Mean simulated seconds between link drops while connected (exponentially distributed);
    /// nil or 0: the link never drops by itself.
    public var linkLossMeanSeconds: Double?
    /// Extra simulated seconds between `Connected` and `ServicesResolved`.
    public var extraResolveDelay: Double?
    /// A service UUID left out of GATT resolution (exported neither before nor after ServicesResolved).
    public var missingService: String?
    /// Simulated seconds `Device1.Disconnect` takes before the link goes and it answers.
    public var disconnectDelay: Double?
    /// A characteristic UUID whose write requests the device refuses with `rejectWritesATTError`
    /// (its writes without response are dropped).
    public var rejectWritesUUID: String?
    /// The ATT error code (1…255) of those refusals; nil: 0xfc.
    public var rejectWritesATTError: Int?
    /// A measurement device's link drops (reason Timeout) right after it indicated this many
    /// records of a burst: the rest stay queued for the next link (a test of "never lost, never
    /// sent twice").
    public var dropLinkAfterRecords: Int?

    public init(
        connectFailure: String? = nil, connectFailureProbability: Double? = nil, linkLossMeanSeconds: Double? = nil,
        extraResolveDelay: Double? = nil, missingService: String? = nil, disconnectDelay: Double? = nil,
        rejectWritesUUID: String? = nil, rejectWritesATTError: Int? = nil, dropLinkAfterRecords: Int? = nil
    ) {
        self.dropLinkAfterRecords = dropLinkAfterRecords
        self.connectFailure = connectFailure
        self.connectFailureProbability = connectFailureProbability
        self.linkLossMeanSeconds = linkLossMeanSeconds
        self.extraResolveDelay = extraResolveDelay
        self.missingService = missingService
        self.disconnectDelay = disconnectDelay
        self.rejectWritesUUID = rejectWritesUUID
        self.rejectWritesATTError = rejectWritesATTError
    }

    /// These settings, with gaps filled from `fleet`.
    func overriding(_ fleet: FaultSettings) -> FaultSettings {
        FaultSettings(
            connectFailure: connectFailure ?? fleet.connectFailure,
            connectFailureProbability: connectFailureProbability ?? fleet.connectFailureProbability,
            linkLossMeanSeconds: linkLossMeanSeconds ?? fleet.linkLossMeanSeconds,
            extraResolveDelay: extraResolveDelay ?? fleet.extraResolveDelay,
            missingService: missingService ?? fleet.missingService,
            disconnectDelay: disconnectDelay ?? fleet.disconnectDelay,
            rejectWritesUUID: rejectWritesUUID ?? fleet.rejectWritesUUID,
            rejectWritesATTError: rejectWritesATTError ?? fleet.rejectWritesATTError,
            dropLinkAfterRecords: dropLinkAfterRecords ?? fleet.dropLinkAfterRecords)
    }
}
