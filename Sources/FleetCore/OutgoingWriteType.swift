/// How a write goes over the air. With response, the device acknowledges each write and only
/// `maxInFlightWithResponse` may be outstanding; without response, each write spends one credit.
public enum OutgoingWriteType: Hashable, Sendable {
    case withResponse
    case withoutResponse
}
