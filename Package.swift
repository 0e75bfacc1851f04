// swift-tools-version:6.1
// Wearfleet: a Linux daemon that keeps a fleet of BLE wearables connected through BlueZ.
// Module map and layering: see ARCHITECTURE.md in the shared project notes and README.md.
import PackageDescription

let package = Package(
    name: "Wearfleet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "FleetCore", targets: ["FleetCore"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "BlueZSimulator", targets: ["BlueZSimulator"]),
        .library(name: "FleetMQTT", targets: ["FleetMQTT"]),
        .executable(name: "bluez-sim", targets: ["bluez-sim"]),
        .executable(name: "wearfleetd", targets: ["wearfleetd"]),
        .executable(name: "wearfleetctl", targets: ["wearfleetctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C libraries (pkg-config)
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),

        // MARK: - Libraries
        .target(name: "DBus", dependencies: ["CDBus", "DetachedThread"]),
        .target(name: "GATT"),
        // The vocabulary the BlueZ client, the simulator and FleetCore share: who a device is
        // (address, address type, adapter), what a BlueZ error or disconnect reason means, what a
        // GATT characteristic allows. Pure and dependency-free, so FleetCore stays free of D-Bus.
        .target(name: "BluetoothVocabulary"),
        // The one seeded random source (SplitMix64) behind FleetCore's jitter and the simulator's draws.
        .target(name: "DeterministicRandom"),
        .target(name: "FleetCore", dependencies: ["GATT", "BluetoothVocabulary", "DeterministicRandom"]),
        // Recorded inputs of the fleet and device machines (JSON in the journal) and their replay:
        // the daemon records through it, `wearfleetctl replay` reads `journalctl -o json` with it.
        .target(name: "FleetReplay", dependencies: ["FleetCore"]),
        .target(name: "BlueZ", dependencies: ["DBus", "BluetoothVocabulary"]),
        // The TOML reader the configuration uses: every key and value keeps its file position.
        .target(name: "TOML"),
        // The configuration file: reading, merging drop-ins, validating with file:line errors, and
        // mapping onto FleetCore's inputs.
        // `allow_commands` takes the catalogue's ops (FleetControl).
        .target(name: "FleetConfiguration", dependencies: ["TOML", "FleetCore", "GATT", "FleetControl"]),
        // The known-devices file: atomic saves, recovery from a bad file.
        .target(name: "FleetState", dependencies: ["FleetCore", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Fleet",
            dependencies: [
                "FleetConfiguration", "FleetState", "FleetCore", "FleetReplay", "BlueZ", "GATT", "DBus", "FleetControl",
                "DetachedThread", "CSocketSupport", "SystemdSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The fleet on an MQTT broker (libmosquitto on a thread of its own): gateway status, device
        // state, values, Home Assistant discovery and commands, as one more daemon service.
        .target(
            name: "FleetMQTT",
            dependencies: [
                "CMosquitto", "Fleet", "FleetControl", "FleetCore", "GATT", "DetachedThread", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The control interface's names, records, client and text/JSON rendering: shared by the
        // daemon (which exports it) and wearfleetctl (which reads it).
        // The command catalogue (each command declared once, with its one argument checker) lives here
        // too, so that it needs only the pure vocabularies besides DBus.
        .target(name: "FleetControl", dependencies: ["DBus", "BluetoothVocabulary", "GATT"]),
        // What Glibc's module leaves out: accept4, pipe2, recvmmsg and pthread_setname_np (GNU
        // extensions), and the epoll declarations for the fd path's poller.
        .target(name: "CSocketSupport"),
        // Prometheus metrics: the metric set, the recorder fed by the orchestrator, the HTTP endpoint.
        .target(
            name: "FleetMetrics",
            dependencies: [
                "Fleet", "FleetCore", "CSocketSupport", "DetachedThread", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Named POSIX threads for the daemon's poll loops, without linking Foundation.
        .target(name: "DetachedThread", dependencies: ["CSocketSupport"]),
        // Child processes (over swift-subprocess) and private buses, for tests and benchmarks.
        // Never a dependency of wearfleetd.
        .target(
            name: "ProcessSupport",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(name: "SystemdSupport", dependencies: ["CSystemd", .product(name: "Logging", package: "swift-log")]),
        .target(name: "BlueZSimulator", dependencies: ["DBus", "GATT", "BluetoothVocabulary", "DeterministicRandom"]),

        // MARK: - Executables
        .executableTarget(
            name: "bluez-sim",
            dependencies: ["BlueZSimulator", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "wearfleetd",
            dependencies: [
                "Fleet", "FleetMetrics", "FleetMQTT", "DBus", "SystemdSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "wearfleetctl",
            dependencies: [
                "FleetControl", "DBus", "FleetCore", "FleetReplay", "GATT", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "dbus-bench", dependencies: ["DBus", "ProcessSupport"], path: "Benchmarks/dbus-bench"),
        // `make bench`: the daemon's ingest, scale, recovery and write figures next to a C bus
        // floor and bleak, against bluez-sim on a private bus.
        .executableTarget(
            name: "fleet-bench",
            dependencies: [
                "Fleet", "FleetCore", "FleetMetrics", "BlueZ", "DBus", "GATT", "BlueZSimulator", "ProcessSupport",
                "SystemdSupport", "FleetControl", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/fleet-bench"),
        // libFuzzer target for the GATT decoders when built with -sanitize=fuzzer -D GATT_FUZZING
        // (`make fuzz`); otherwise a tool that replays files through every decoder.
        .executableTarget(name: "gatt-fuzz", dependencies: ["GATT"], path: "Fuzz/gatt-fuzz"),

        // MARK: - Tests
        // Shared by the integration tests: a private dbus-daemon, timeouts on awaited events.
        .target(
            name: "TestSupport", dependencies: ["ProcessSupport", .product(name: "Logging", package: "swift-log")], path: "Tests/Support"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "ProcessSupportTests", dependencies: ["ProcessSupport"]),
        .testTarget(
            name: "FleetMQTTTests",
            dependencies: [
                "FleetMQTT", "Fleet", "FleetControl", "FleetCore", "GATT", "BlueZSimulator", "DBus", "ProcessSupport", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "BluetoothVocabulary", "DBus", "TestSupport"]),
        .testTarget(
            name: "FleetTests",
            dependencies: [
                "Fleet", "FleetConfiguration", "FleetState", "TOML", "FleetCore", "FleetReplay", "GATT", "BlueZ", "BlueZSimulator",
                "DBus", "DetachedThread", "TestSupport", "FleetControl",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "FleetControlTests",
            dependencies: [
                "FleetControl", "Fleet", "FleetConfiguration", "FleetCore", "FleetReplay", "DBus", "BlueZSimulator", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FleetMetricsTests",
            dependencies: [
                "FleetMetrics", "Fleet", "FleetCore", "BlueZ", "BlueZSimulator", "DBus", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: ["SystemdSupport", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["BlueZSimulator", "DBus", "GATT", "TestSupport"]),
        .testTarget(
            name: "GATTTests",
            dependencies: ["GATT", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "BluetoothVocabularyTests", dependencies: ["BluetoothVocabulary", "DeterministicRandom"]),
        .testTarget(name: "FleetReplayTests", dependencies: ["FleetReplay", "FleetCore", "GATT"]),
        .testTarget(
            name: "FleetCoreTests",
            dependencies: ["FleetCore", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
    ]
)
