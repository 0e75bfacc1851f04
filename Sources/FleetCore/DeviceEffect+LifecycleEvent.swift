extension DeviceEffect {
    /// A structured event for journald fields (`DEVICE_STATE`, `SESSION_ID`, `ERROR_CLASS`,
    /// `BLUEZ_ERROR`) and metrics. `session` numbers connection attempts of this device from 1;
    /// 0 means no attempt has been granted yet.
    public enum LifecycleEvent: Hashable, Sendable, Codable {
        /// The state changed; always the last effect of the reduce call that changed it.
        /// `cause` is the class of the failure that made it change, nil when no failure did.
        case stateChanged(from: DeviceState, to: DeviceState, session: UInt64, cause: FailureClass?)
        /// An attempt or a link failed. `error` is BlueZ's report when there was one (nil for our
        /// own timeouts and for missing services).
        case failed(FailureClass, error: Failure?, session: UInt64)
        /// A non-fatal problem on a linked device (a subscription or read-on-connect failed).
        case setupProblem(characteristic: String, error: Failure?, session: UInt64)

        public typealias Failure = DeviceEvent.Failure
    }
}
