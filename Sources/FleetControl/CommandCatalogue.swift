/// The commands that change the fleet, each declared once (`CommandDeclaration`). The D-Bus
/// methods (`ControlInterface+Commands`), the MQTT ops of both scopes (`MQTTBridge+Commands`,
/// `MQTTBridge+GatewayRequests`), wearfleetctl's subcommands and the README's tables
/// (`CommandCatalogue+Markdown`) all follow from it, and one checker (`CommandArgumentChecker`)
/// holds every front end's arguments to it. A new command is a `CommandName` case, its
/// declaration below, its case in `FleetCommandRunner`, and its tests.
public enum CommandCatalogue {
    /// Every declaration, in the catalogue's order.
    public static var all: [CommandDeclaration] { CommandName.allCases.map(declaration(of:)) }

    /// The declaration of the command MQTT and wearfleetctl call `op`.
    public static func declaration(op: String) -> CommandDeclaration? {
        CommandName(rawValue: op).map(declaration(of:))
    }

    /// The declaration of the D-Bus method `member`.
    public static func declaration(member: String) -> CommandDeclaration? {
        all.first { $0.member == member }
    }

    // MARK: - Limits

    /// A device's priority: `FleetPinOptions.priorities` (a test holds them equal).
    public static let priorities = 0...1000
    /// A write's bytes: at least one, at most the outgoing queue's write size.
    public static let writeBytes = 1...512

    // MARK: - The arguments the commands share

    static let address = CommandArgument.positional(
        "address", .address, help: "The device's Bluetooth address (its address type: the fleet's device's, else public).")
    static let uuid = CommandArgument.positional(
        "uuid", .uuid, jsonKey: "characteristic", help: "The characteristic's UUID (2a37 or the 128-bit form).")

    // MARK: - The declarations

    public static func declaration(of name: CommandName) -> CommandDeclaration {
        let errors = WearfleetControl.ErrorName.self
        switch name {
        case .pin:
            return CommandDeclaration(
                .pin, member: "Pin", scopes: [.device, .gateway],
                arguments: [
                    address,
                    CommandArgument(
                        "address_type", .addressType, defaultText: "the fleet's device's, else public",
                        help: "The address is public or random (a random-address wearable the fleet has not met yet)."),
                    CommandArgument(
                        "class", .string(bytes: 1...64), defaultText: "default", help: "A [classes.NAME] of the configuration."),
                    CommandArgument(
                        "priority", .integer(priorities), default: .integer(0),
                        help: "Orders pinned devices when slots run short (higher first), as in the file."),
                    CommandArgument("name", .string(bytes: 0...248), help: "A name for logs and status (a GAP device name)."),
                ],
                aliases: [CommandDeclaration.Alias("random", sets: "address_type", whenTrue: "random", on: [.cli])],
                errors: [errors.unknownClass, errors.alreadyPinned, errors.pinnedByConfiguration, errors.tooManyPins, errors.notSaved],
                abstract: "Pin a device at run time: the daemon keeps it connected, across restarts and reloads.",
                discussion: "Connected whenever reachable, merged with the configuration's pins, kept across reloads and restarts "
                    + "(`runtime-pins.json` in the state directory, written atomically before the answer).")
        case .unpin:
            return CommandDeclaration(
                .unpin, member: "Unpin", scopes: [.device, .gateway], arguments: [address],
                errors: [errors.unknownDevice, errors.notPinned, errors.pinnedByConfiguration, errors.notSaved],
                abstract: "Undo a run-time pin (a pin of the configuration file is refused with its file:line).",
                discussion: "The device stays as a pool candidate when the pool is on, else is released.")
        case .disconnect:
            return CommandDeclaration(
                .disconnect, member: "Disconnect", arguments: [address], errors: [errors.unknownDevice, errors.bluetoothFailed],
                abstract: "Release a device's link and hold it disconnected until 'reconnect'.",
                discussion: "Answers once bluetoothd reported the link gone (at once when there was none), or `BluetoothFailed` "
                    + "(timeout) if it is still up after 10 s (the device stays held); `pin` lifts the hold too.")
        case .reconnect:
            return CommandDeclaration(
                .reconnect, member: "Reconnect", arguments: [address], errors: [errors.unknownDevice],
                abstract: "Pursue a device now: lift a hold, clear its backoff and a given-up budget.",
                discussion: "Answers once the fleet took it (the attempt follows within the adapter's slots and attempt rate).")
        case .read:
            return CommandDeclaration(
                .read, member: "Read", arguments: [address, uuid],
                result: .bytes(name: "value", jsonKey: "hex", help: "the value read (it is also published as a value)"),
                errors: [errors.unknownDevice, errors.notConnected, errors.unknownCharacteristic, errors.notSupported, errors.bluetoothFailed],
                abstract: "Read a characteristic of a connected device; prints its value in hex.")
        case .subscribe:
            return CommandDeclaration(
                .subscribe, member: "Subscribe", arguments: [address, uuid],
                errors: [errors.unknownDevice, errors.unknownCharacteristic, errors.notSupported, errors.alreadySubscribed],
                abstract: "Subscribe to a characteristic's notifications from now on (kept across reloads, not restarts).",
                discussion: "At once on a set-up link (its GATT objects checked), else at its next connection (a missing one "
                    + "degrades it).")
        case .unsubscribe:
            return CommandDeclaration(
                .unsubscribe, member: "Unsubscribe", arguments: [address, uuid], errors: [errors.unknownDevice, errors.notSubscribed],
                abstract: "Stop a characteristic's notifications (the class's own subscriptions too, until a restart).")
        case .write:
            return CommandDeclaration(
                .write, member: "Write",
                arguments: [
                    address, uuid,
                    CommandArgument(
                        "value", .bytes(count: writeBytes), placement: .positional, required: true, jsonKey: "hex",
                        help: "The value (hex on MQTT and the command line: 0a1b2c; ':' between bytes is allowed)."),
                    CommandArgument(
                        "mode", .word(["request", "command", "auto"]), default: .word("request"),
                        frontEndDefaults: [.mqtt: .word("auto")],
                        help: "request: with response (answers once the device acknowledged it); command: without response "
                            + "(answers once handed to bluetoothd); auto: control writes with response, others without, "
                            + "where the characteristic allows."),
                    CommandArgument(
                        "qos", .word(["control", "normal", "bulk"]), defaultText: "the class's default_qos",
                        help: "The write's class of service."),
                    CommandArgument(
                        "replace", .bool, default: .bool(false),
                        help: "Only the newest value matters: replace a still-queued replace write to the characteristic within "
                            + "the class's coalescing_window (that one then answers Replaced, never sent)."),
                ],
                aliases: [
                    CommandDeclaration.Alias("without_response", sets: "mode", whenTrue: "command", whenFalse: "request", on: [.dbus, .cli])
                ],
                result: .word(name: "outcome", jsonKey: "write", help: "`acknowledged` (with response: the device answered) or `sent` (without response: handed to bluetoothd)"),
                errors: [
                    errors.unknownDevice, errors.notConnected, errors.unknownCharacteristic, errors.notSupported, errors.tooLarge,
                    errors.queueFull, errors.notSent, errors.timedOut, errors.replaced, errors.bluetoothFailed,
                ],
                abstract: "Write a value to a characteristic of a connected device; answers once it is acknowledged (or sent).",
                discussion: "Goes through the device's queue of that QoS like every write. Answers within 24 s of the call, under "
                    + "`busctl`'s 25 s and wearfleetctl's 30 s: the write may wait for its turn for 24 s less the class's `write` "
                    + "timeout and 1 s; one not begun then is taken back and answers `Timeout` (never sent, so trying again "
                    + "writes once), one that began answers by its class timeout.")
        case .pair, .unpair:
            return pairingDeclaration(of: name)
        case .nearby:
            return CommandDeclaration(
                .nearby, member: "Nearby", scopes: .gateway,
                arguments: [
                    CommandArgument(
                        "scan", .integer(0...20), default: .integer(0),
                        help: "Seconds every adapter discovers, unfiltered, before the answer (0: what bluetoothd reports now; "
                            + "the fleet discovers only while it looks for a device).")
                ],
                result: .records(
                    name: "devices", jsonKey: "devices", fields: nearbyFields,
                    help: "the devices the radio hears that are not in the fleet, strongest first"),
                errors: [],
                abstract: "List what the radio hears that is not in the fleet: address, type, name, RSSI, when last reported, services.",
                discussion: "From the daemon's own view of bluetoothd (no scan of its own unless `scan` asks for one): `address`, "
                    + "`address_type`, `name`, `rssi` (dBm, the strongest adapter's), `last_report_seconds` (since bluetoothd last reported "
                    + "hearing it: it reports an RSSI again only when it moved by 8 dBm, so a scan gives fresh reports; absent "
                    + "when not since bluetoothd's objects were read), `services`, `adapters`, `connected`, "
                    + "`paired`, and `pool_class`: the class the pool would give it (absent when the pool is off or would not take it).")
        }
    }

    /// `pair` and `unpair`.
    static func pairingDeclaration(of name: CommandName) -> CommandDeclaration {
        let errors = WearfleetControl.ErrorName.self
        if name == .unpair {
            return CommandDeclaration(
                .unpair, member: "Unpair", arguments: [address], errors: [errors.unknownDevice, errors.bluetoothFailed],
                abstract: "Forget a device's bond: bluetoothd removes its objects (BlueZ's only unpairing) and it is found again unbonded.")
        }
        return CommandDeclaration(
            .pair, member: "Pair", arguments: [address], errors: [errors.unknownDevice, errors.bluetoothFailed],
            abstract: "Bond with a fleet device now, connecting first if needed; the daemon's agent answers its pairing.",
            discussion: "A device that displays a passkey needs it in `[pairing] passkeys_file` and an agent capability that can "
                + "enter one (`KeyboardOnly`, `KeyboardDisplay`). bluetoothd's refusal is the answer (`BluetoothFailed` with "
                + "`AuthenticationFailed`: a wrong or missing passkey; `AlreadyExists`: bonded already); answers within 24 s.")
    }

    /// `nearby`'s fields, in order (a text table's columns, a record's keys).
    public static let nearbyFields = [
        "address", "address_type", "name", "rssi", "last_report_seconds", "services", "adapters", "connected", "paired", "pool_class",
    ]

    // MARK: - Errors

    /// The error names an argument of `kind` is refused with.
    public static func errorNames(for kind: CommandArgument.Kind) -> [String] {
        let errors = WearfleetControl.ErrorName.self
        switch kind {
        case .address: return [errors.invalidAddress]
        case .uuid: return [errors.invalidUUID]
        case .bytes: return [errors.tooLarge, errors.invalidOption]
        case .addressType, .string, .integer, .word, .bool: return [errors.invalidOption]
        }
    }

    /// Every error name the interface answers with, and when (README's error table).
    public static let errorDocumentation: [(name: String, when: String)] = {
        let errors = WearfleetControl.ErrorName.self
        return [
            (errors.invalidAddress, "the address is not `AA:BB:CC:DD:EE:FF`"),
            (errors.unknownDevice, "no such device in the fleet"),
            (errors.invalidUUID, "the UUID is not one"),
            (errors.invalidOption, "an argument or option unknown, of the wrong type or out of range (e.g. `qos` `urgent`, an empty value)"),
            (errors.unknownClass, "`Pin` names a class the configuration lacks"),
            (errors.alreadyPinned, "`Pin` of a device pinned at run time already"),
            (errors.notPinned, "`Unpin` of a device not pinned at run time"),
            (errors.pinnedByConfiguration, "`Pin`/`Unpin` of a device the file pins: `… at /etc/wearfleet/wearfleetd.toml:12; unpin it there and reload`"),
            (errors.notConnected, "`Read`/`Write` to a device with no usable link"),
            (errors.unknownCharacteristic, "the device shows no such characteristic"),
            (errors.notSupported, "the characteristic lacks the property (`read`, `write`, `write-without-response`, `notify`)"),
            (errors.tooLarge, "the value is longer than \(writeBytes.upperBound) bytes"),
            (errors.queueFull, "the device's queue for that QoS is full (`queue_depth`): slow down"),
            (errors.notSent, "queued, then dropped unsent (the link was lost, the device left the fleet)"),
            (errors.timedOut, "still queued when its wait ran out (24 s less the class `write` timeout and 1 s): taken back, never sent"),
            (errors.replaced, "a newer `replace` write to the same characteristic took its place while it was queued: never sent"),
            (errors.alreadySubscribed, "`Subscribe` to a characteristic the device has notifications of already"),
            (errors.notSubscribed, "`Unsubscribe` from one it has none of"),
            (errors.bluetoothFailed, "bluetoothd or the device refused or failed it; the message has BlueZ's error"),
            (errors.tooManyPins, "1,024 devices are pinned at run time already (unpin one first)"),
            (errors.tooManyWatchers, "64 clients watch already (`WatchValues`)"),
            (errors.invalidFilter, "`WatchValues` got a filter it cannot use; the message names the key"),
            (errors.notSaved, "`runtime-pins.json` could not be written, so the pin or unpin was undone: nothing changed"),
            ("org.freedesktop.DBus.Error.AccessDenied",
             "the caller is neither root nor in group `wearfleet-admin` (from the bus policy or from the daemon's own check)"),
        ]
    }()
}
