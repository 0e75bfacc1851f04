// Every metric wearfleetd exports is named here and nowhere else: the recorder records the fleet
// and adapter series in these families and renders the per-device ones from plain figures, the
// exporter writes their HELP lines, README's table documents them.
//
// Labels. A device's identity labels (`address`, `name`, `class`) never change while the daemon
// runs, so its counters and its histogram are labelled by identity alone: they never restart when
// the device moves to another adapter. Gauges that describe the device now also carry `adapter`
// (the adapter of its link or attempt, else the last one it used, "" before its first attempt);
// when a device moves, its gauges are rendered under the new adapter only, so each device has
// exactly one current set of gauge series. Label values are escaped as they are rendered
// (`ExpositionSample`).

/// The metric families of the fleet.
public enum FleetMetricCatalogue {
    static let identity = ["address", "name", "class"]
    static let present = identity + ["adapter"]

    // MARK: - Per device

    public static let deviceState = MetricFamily(
        "wearfleet_device_state", .gauge, labels: present + ["state"],
        help: "1 for the device's current state, 0 for the others (idle, asleep, resolving, connecting, discovering, pairing, ready, degraded, backingOff, suspended).")
    public static let deviceConnectedSeconds = MetricFamily(
        "wearfleet_device_connected_seconds", .gauge, labels: present,
        help: "Seconds since the device's current link came up (discovering, pairing, ready or degraded); 0 without a link.")
    public static let deviceBackoffDeadline = MetricFamily(
        "wearfleet_device_backoff_deadline_timestamp_seconds", .gauge, labels: present,
        help: "Unix time of the device's next connection attempt while it is backing off; 0 otherwise.")
    public static let deviceQueueDepth = MetricFamily(
        "wearfleet_device_queue_depth", .gauge, labels: present + ["qos"],
        help: "Writes waiting in the device's outgoing queue, per QoS class (control, normal, bulk).")
    public static let deviceLastError = MetricFamily(
        "wearfleet_device_last_error_timestamp_seconds", .gauge, labels: present + ["error_class"],
        help: "Unix time of the device's last failure; error_class says what it was. Absent until the first failure.")
    public static let deviceLastValue = MetricFamily(
        "wearfleet_device_last_value_timestamp_seconds", .gauge, labels: present,
        help: "Unix time the device's last decoded value arrived (a sleeping cuff's or scale's last measurement). "
            + "Absent until its first value.")
    public static let deviceReadyLatency = MetricFamily(
        "wearfleet_device_ready_latency_seconds", .histogram, labels: identity,
        help: "Seconds from the start of a connection attempt (Device1.Connect) to ready, for attempts that reached ready.")
    public static let deviceReconnectAttempts = MetricFamily(
        "wearfleet_device_reconnect_attempts_total", .counter, labels: identity,
        help: "Connection attempts granted to the device after its first one.")
    public static let deviceWrites = MetricFamily(
        "wearfleet_device_writes_total", .counter, labels: identity + ["type"],
        help: "Writes sent to the device, by type (with_response, without_response).")
    public static let deviceNotifications = MetricFamily(
        "wearfleet_device_notifications_total", .counter, labels: identity,
        help: "Characteristic values received from the device: notifications, indications and reads on connect.")
    public static let deviceDecodeErrors = MetricFamily(
        "wearfleet_device_decode_errors_total", .counter, labels: identity,
        help: "Values from the device that could not be decoded.")
    public static let deviceErrors = MetricFamily(
        "wearfleet_device_errors_total", .counter, labels: identity + ["error_class"],
        help: "Failed attempts and lost links of the device, by failure class, as they were reported "
            + "(those later put down to the adapter or bluetoothd included).")
    /// A counter cannot go down: a failure the fleet later puts down to the adapter or bluetoothd
    /// stays in `deviceErrors` and is counted here too, so the device's own failures are the
    /// difference.
    public static let deviceExplainedErrors = MetricFamily(
        "wearfleet_device_explained_errors_total", .counter, labels: identity + ["error_class"],
        help: "Failures in wearfleet_device_errors_total that were not the device's: its adapter powered off or bluetoothd "
            + "left right after the link or attempt ended. Subtract them for the device's own failures.")

    // MARK: - Per adapter

    public static let adapterSlots = MetricFamily(
        "wearfleet_adapter_slots", .gauge, labels: ["adapter"],
        help: "LE connection slots the fleet may use on the adapter.")
    public static let adapterSlotsUsed = MetricFamily(
        "wearfleet_adapter_slots_used", .gauge, labels: ["adapter"],
        help: "Slots of the adapter held by links and attempts in flight.")
    public static let adapterAttemptsInFlight = MetricFamily(
        "wearfleet_adapter_attempts_in_flight", .gauge, labels: ["adapter"],
        help: "Connection attempts in flight on the adapter.")
    public static let adapterPowered = MetricFamily(
        "wearfleet_adapter_powered", .gauge, labels: ["adapter"],
        help: "1 when the adapter is powered, 0 otherwise.")
    public static let adapterDiscoveryErrors = MetricFamily(
        "wearfleet_adapter_discovery_errors_total", .counter, labels: ["adapter"],
        help: "Discovery calls (SetDiscoveryFilter, StartDiscovery, StopDiscovery) bluetoothd refused on the adapter.")

    // MARK: - Fleet

    public static let pinnedReady = MetricFamily(
        "wearfleet_pinned_ready_devices", .gauge,
        help: "Pinned devices that are ready.")
    public static let pinnedDevices = MetricFamily(
        "wearfleet_pinned_devices", .gauge,
        help: "Pinned devices in the configuration.")
    public static let bluetoothdUp = MetricFamily(
        "wearfleet_bluetoothd_up", .gauge,
        help: "1 while bluetoothd (org.bluez) is on the bus, 0 otherwise.")

    // MARK: - MQTT

    public static let mqttConnected = MetricFamily(
        "wearfleet_mqtt_connected", .gauge,
        help: "1 while the MQTT broker has accepted the connection, 0 otherwise (or MQTT is off).")
    public static let mqttPublished = MetricFamily(
        "wearfleet_mqtt_published_total", .counter,
        help: "Messages handed to the MQTT client library for the broker.")
    public static let mqttDropped = MetricFamily(
        "wearfleet_mqtt_dropped_total", .counter,
        help: "MQTT messages dropped: values beyond the queue while the broker was away, the oldest first.")
    public static let mqttReconnects = MetricFamily(
        "wearfleet_mqtt_reconnects_total", .counter,
        help: "Connection attempts to the MQTT broker after the first.")
    public static let mqttRetainedFailures = MetricFamily(
        "wearfleet_mqtt_retained_failures_total", .counter,
        help: "Retained MQTT messages (states, discovery, their deletions) the client library refused; kept to send again.")

    /// Every family, in the order README documents them.
    public static let all: [MetricFamily] = [
        deviceState, deviceConnectedSeconds, deviceBackoffDeadline, deviceQueueDepth, deviceLastError, deviceLastValue,
        deviceReadyLatency, deviceReconnectAttempts, deviceWrites, deviceNotifications, deviceDecodeErrors, deviceErrors,
        deviceExplainedErrors, adapterSlots, adapterSlotsUsed, adapterAttemptsInFlight, adapterPowered, adapterDiscoveryErrors,
        pinnedReady, pinnedDevices, bluetoothdUp,
        mqttConnected, mqttPublished, mqttDropped, mqttReconnects, mqttRetainedFailures,
    ]

    /// Upper bounds of the ready-latency histogram's buckets: a fast link is ready in well under
    /// a second, a Pi 4 takes 0.25–1.25 s to resolve services, first-time resolution up to 10 s+.
    public static let readyLatencyBuckets: [Duration] = [
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(60), .seconds(120),
    ]
}
