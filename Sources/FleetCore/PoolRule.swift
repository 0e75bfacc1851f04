import GATT

/// One `[[pool.rules]]` entry: devices it matches get its priority and class. Rules are tried in
/// order and the first match wins; a rule matches when every condition it states holds.
public struct PoolRule: Hashable, Sendable, Codable {
    /// The advertised name starts with this.
    public var namePrefix: String?
    /// The device advertises this service.
    public var service: BluetoothUUID?
    public var priority: Int?
    public var className: String?

    public init(namePrefix: String? = nil, service: BluetoothUUID? = nil, priority: Int? = nil, className: String? = nil) {
        self.namePrefix = namePrefix
        self.service = service
        self.priority = priority
        self.className = className
    }

    public func matches(name: String?, services: Set<BluetoothUUID>) -> Bool {
        if let namePrefix, !(name ?? "").hasPrefix(namePrefix) { return false }
        if let service, !services.contains(service) { return false }
        return true
    }
}
