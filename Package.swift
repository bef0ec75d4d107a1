// swift-tools-version: 6.1
import PackageDescription

// Module map (one concern each):
//   CGPIOD, CALSA        system libraries through pkg-config
//   CStationShim         one small C API over libgpiod v1 and v2, chosen when compiled
//   StationConfig        the board's configuration file: parse and validate
//   StationIO            edges in (GPIO / simulated), the click out (ALSA / buzzer), the hot loop
//   TrainingEngine       pure: programs, layouts, the trial state machine, scoring
//   Figures              pure: every counter and statistic (Tally, Wilson, Fisher, the report's assembly)
//   Rescoring            pure: a second scoring from the log's rows alone, sharing no code with the engine
//   Thresholds           pure: dilution ladders, staircases, constant stimuli, the psychometric fit (issue 38)
//   ProgramFiles         a program's TOML text read and checked into the engine's Program; the built-ins
//   StationControl       the control socket: its protocol, server and client, what a station answers
//   VirtualDog           pure: a simulated dog that produces raw sensor edges
//   ReadingRows          the readings' one row interface (a query, its parameters, typed columns) and the two dialects
//   SessionLog           SQLite through GRDB: the append-only record, its reads and exports
//   Readings             each researcher reading once (query, decoder, counter), run on a log or the lab store alike
//   Report               the researcher's HTML report: draws what Figures assembled (inline SVG)
//   StationLogging       one logger per component (swift-log), one line each, journald-friendly
//   StationRuntime       the live session: engine on the hot path, log feeder, station service
//   LineupBench          not product code: the benchmarks' helpers and the log filler (test data)
//   WebAccounts          the station page's accounts: a small SQLite file, bcrypt hashes (lineupctl and lineup-web)
//   StationWeb           the station's page: accounts, sessions, CSRF, the routes over the control socket
//   lineupd, lineupctl   the daemon (flags, assembly, signals) and the tool (LineupctlTool; lineupctl's
//                        own executable only starts it)
//   lineup-net           lineupctl, lineup-web, lineup-sync and lineup-alerts in one binary (their *Tool
//                        modules), run by the name it is started as: the one the package installs
//   lineup-bench         the benchmarks (LineupBench's runners): built, never installed
//   lineup-web           the station page's service: the only process with a network listener
//   LabStore             the lab's PostgreSQL store: its schema, roles and the sync of a station's log
//   LabLink              lineupctl's link to the lab store: a child process (`lineup-sync lab-link`) that
//                        links the store's client and TLS, answering over a socket (lineupctl links neither)
//   lineup-sync          the station's sync into the lab store: its own process (lineupd has no network);
//                        also the lab store's client for lineupctl's --lab and `lab` commands
//   LabWeb, lineup-lab   the lab's page: every station's heartbeat from the store, on the station page's stack
//   Alerts               pure: the alert rules over status and heartbeats, once/repeat/resolved, the messages
//   lineup-alerts        the sender: watches lineupd (and the lab store), e-mail, webhooks, a dead-man URL
let package = Package(
    name: "lineup",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "lineupd", targets: ["lineupd"]),
        .executable(name: "lineupctl", targets: ["lineupctl"]),
        .executable(name: "lineup-web", targets: ["lineup-web"]),
        .executable(name: "lineup-sync", targets: ["lineup-sync"]),
        .executable(name: "lineup-lab", targets: ["lineup-lab"]),
        .executable(name: "lineup-alerts", targets: ["lineup-alerts"]),
        // lineupctl and the three network tools in one binary: the one the package installs, the
        // four names linked to it (packaging/deb/build.sh; issue 35). lineupd stays apart.
        .executable(name: "lineup-net", targets: ["lineup-net"]),
        // The benchmarks: built by `swift build` for CI and developers, never installed.
        .executable(name: "lineup-bench", targets: ["lineup-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        // Hummingbird's own: named so StationWeb may import HTTPTypes (its header names).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // The lab store's client: for LabStore and lineup-sync only; lineupd and lineupctl must never link it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // postgres-nio's own TLS: named so LabStore may build the store's TLS settings (sslmode).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // lineup-alerts' SMTP client (NIOCore, NIOPosix) and HTTP client: both already in the build
        // (postgres-nio's and hummingbird's own), named so lineup-alerts may import them.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CGPIOD",
            pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]
        ),
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .target(
            name: "CStationShim",
            dependencies: ["CGPIOD", "CALSA"]
        ),
        .target(
            name: "StationConfig",
            dependencies: [.product(name: "TOMLKit", package: "TOMLKit")]
        ),
        .target(
            name: "StationIO",
            dependencies: ["CStationShim", "CALSA", "StationConfig"]
        ),
        // The engine runs a step's threshold procedure (issue 38) with Thresholds' own code.
        .target(name: "TrainingEngine", dependencies: ["Thresholds"]),
        // Every figure from plain values: no storage beneath it (FiguresLayoutTests).
        .target(name: "Figures", dependencies: ["TrainingEngine", "ProgramFiles", "StationConfig", "Thresholds"]),
        .target(name: "Rescoring"),
        .target(name: "Thresholds"),
        .target(
            name: "ProgramFiles",
            dependencies: [
                "TrainingEngine", "Thresholds", "StationConfig", .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            resources: [
                .embedInCode("Programs/study.toml"), .embedInCode("Programs/research-5-station.toml"),
                .embedInCode("Programs/olfactometer-rig.toml"), .embedInCode("Programs/threshold.toml"),
            ]
        ),
        .target(
            name: "StationControl",
            dependencies: ["TrainingEngine"]
        ),
        .target(
            name: "VirtualDog",
            dependencies: ["TrainingEngine", "Figures", "Thresholds"]
        ),
        .target(
            name: "SessionLog",
            dependencies: [
                "TrainingEngine", "Figures", "ProgramFiles", "Rescoring", "ReadingRows",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The row interface both stores implement: no storage module beneath it (ReadingsLayoutTests).
        .target(name: "ReadingRows", dependencies: ["TrainingEngine"]),
        // Every reading once, on any RowSource: imports no GRDB and no PostgresNIO (ReadingsLayoutTests).
        .target(name: "Readings", dependencies: ["ReadingRows", "Figures", "TrainingEngine"]),
        .target(
            name: "LineupBench",
            dependencies: [
                "StationIO", "SessionLog", "TrainingEngine", "Figures", "StationRuntime", "StationConfig",
                "StationControl", "Thresholds", "ReadingRows",
            ]
        ),
        .target(
            name: "StationLogging",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "Report",
            dependencies: ["SessionLog", "TrainingEngine", "Figures"]
        ),
        .target(
            name: "StationRuntime",
            dependencies: [
                "StationConfig", "StationIO", "TrainingEngine", "Thresholds", "Figures", "ProgramFiles", "VirtualDog",
                "SessionLog",
                "StationControl", "StationLogging", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "lineupd",
            dependencies: [
                "StationRuntime", "Thresholds", "StationConfig", "StationIO", "TrainingEngine", "Figures", "VirtualDog",
                "SessionLog",
                "StationControl", "StationLogging", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "lineupctl", dependencies: ["LineupctlTool"]),
        .target(
            name: "LineupctlTool",
            dependencies: [
                "StationConfig", "LabLink", "StationIO", "TrainingEngine", "Figures", "ProgramFiles",
                "SessionLog", "Readings", "ReadingRows",
                "StationControl", "Report", "StationLogging", "WebAccounts", "Rescoring",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The benchmarks (docs/tests.md, "benchmarks"): their own executable so that no station
        // installs them (packaging/deb/build.sh ships lineupd, lineupctl, lineup-web, lineup-sync).
        .executableTarget(
            name: "lineup-bench",
            dependencies: [
                "LineupBench", "LabStore", "Readings", "ReadingRows", "Report", "SessionLog", "StationControl",
                "StationIO",
                "StationLogging",
                "Thresholds", "TrainingEngine", "Figures", "VirtualDog",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "WebAccounts",
            dependencies: [
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "StationWeb",
            dependencies: [
                "WebAccounts", "StationControl", "TrainingEngine", "Figures", "SessionLog", "Readings", "ProgramFiles",
                "Report", "ReadingRows", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(name: "lineup-web", dependencies: ["LineupWebTool"]),
        .target(
            name: "LineupWebTool",
            dependencies: [
                "StationWeb", "SessionLog", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // lineupctl's side of the lab store: no PostgreSQL client, SwiftNIO or TLS beneath it
        // (SourceLayoutTests), so the station's everyday tool builds without them.
        .target(name: "LabLink", dependencies: ["ReadingRows", "SessionLog", "Figures", "TrainingEngine"]),
        .target(
            name: "LabStore",
            dependencies: [
                "SessionLog", "Figures", "StationControl", "ReadingRows", "LabLink",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "lineup-sync", dependencies: ["LineupSyncTool"]),
        .target(
            name: "LineupSyncTool",
            dependencies: [
                "LabStore", "LabLink", "SessionLog", "StationControl", "TrainingEngine", "Figures", "ReadingRows",
                "Report", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // lineup-bench reaches the malloc interposer at run time (Sources/lineup-bench/MallocCounter.swift)
        // and does not link it. This check links it, which is what makes `swift build` build
        // libMallocInterposerSwift.so beside lineup-bench for `lineup-bench click|engine` to
        // preload; run, it says whether the interposer counts allocations on this machine.
        .executableTarget(
            name: "lineup-malloc-check",
            dependencies: [.product(name: "MallocInterposerSwift", package: "malloc-interposer")]
        ),
        .target(
            name: "LabWeb",
            dependencies: [
                "LabStore", "StationWeb", "WebAccounts", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .executableTarget(
            name: "lineup-lab",
            dependencies: [
                "LabWeb", "LabStore", "StationWeb", "WebAccounts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "Alerts",
            dependencies: ["StationControl", "StationConfig", .product(name: "TOMLKit", package: "TOMLKit")]
        ),
        // lineupd keeps no network: the alerts go out from this process, which asks lineupd over
        // its control socket and, on the lab's server, reads the store's heartbeats.
        .executableTarget(name: "lineup-alerts", dependencies: ["LineupAlertsTool"]),
        .target(
            name: "LineupAlertsTool",
            dependencies: [
                "Alerts", "StationControl", "LabStore",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Runs the tool it is started as (argv[0]: the package's links) or the one named first.
        .executableTarget(
            name: "lineup-net",
            dependencies: ["LineupctlTool", "LineupWebTool", "LineupSyncTool", "LineupAlertsTool"]
        ),
        // The test targets' `.ownThreads` trait, one copy for LineupdTests and LabStoreTests.
        .target(name: "TestThreads", path: "Tests/TestThreads"),
        .testTarget(name: "AlertsTests", dependencies: ["Alerts", "StationControl"]),
        .testTarget(name: "StationConfigTests", dependencies: ["StationConfig"]),
        .testTarget(
            name: "StationIOTests",
            dependencies: ["StationIO", "StationConfig", "LineupBench"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "TrainingEngineTests",
            dependencies: [
                "TrainingEngine", "Figures", "ProgramFiles",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "VirtualDogTests",
            dependencies: [
                "VirtualDog", "TrainingEngine", "Figures",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "ThresholdsTests", dependencies: ["Thresholds", "TrainingEngine", "Figures", "VirtualDog"]),
        .testTarget(name: "StationLoggingTests", dependencies: ["StationLogging"]),
        .testTarget(name: "StationControlTests", dependencies: ["StationControl", "TrainingEngine"]),
        .testTarget(
            name: "SessionLogTests",
            dependencies: [
                "SessionLog", "Readings", "TrainingEngine", "Figures", "ProgramFiles", "LineupBench", "Report",
                "Thresholds", "ReadingRows",
            ],
            exclude: ["Fixtures"]),
        // Every figure from hand-built trials: no log, no SQLite.
        .testTarget(
            name: "FiguresTests",
            dependencies: [
                "Figures", "TrainingEngine", "StationConfig",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "RescoringTests",
            dependencies: [
                "Rescoring", "TrainingEngine", .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "StationRuntimeTests",
            dependencies: [
                "StationRuntime", "StationIO", "SessionLog", "TrainingEngine", "ProgramFiles", "StationControl",
                "ReadingRows", "Figures",
            ]
        ),
        .testTarget(
            name: "StationWebTests",
            dependencies: [
                "StationWeb", "WebAccounts", "StationControl", "TrainingEngine", "Figures", "SessionLog", "Readings",
                "ReadingRows", "LineupBench", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "LabStoreTests",
            dependencies: [
                "LabStore", "SessionLog", "Figures", "LineupBench", "Readings", "ReadingRows",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "GRDB", package: "GRDB.swift"),
                "LabWeb", "StationControl", "StationWeb", "WebAccounts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"), "TestThreads",
            ]
        ),
        .testTarget(
            name: "LineupdTests",
            dependencies: [
                "SessionLog", "TrainingEngine", "Figures", "ProgramFiles", "StationControl", "ReadingRows",
                "TestThreads",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
