// swift-tools-version: 6.0
// TrafficIncidents: ingest public traffic-incident feeds into SQLite and query them.
// Layout and dependency direction: docs/development.md, "Architecture".
import PackageDescription

// Foundation's URLSession calls libcurl through CCurl, which opens it on first use: no module of a
// program asks the linker for it (docs/development.md, "C libraries opened on first use").
let curlOnFirstUse: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-autolink-library", "-Xfrontend", "curl"])]

// A concrete generic type's metadata (e.g. a Dictionary's storage) through a metadata accessor,
// which passes its conformances (String: Hashable) as they are, instead of by mangled name,
// which has the runtime demangle the name and scan every conformance record of the executable
// for each key type's first use: about 0.35 M instructions each, several per query (issue 23,
// "start fast"; docs/development.md, "C libraries opened on first use").
let metadataAccessors: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])]

let package = Package(
    name: "TrafficIncidents",
    platforms: [.macOS(.v15)],  // Synchronization.Mutex; the product targets Linux
    products: [
        .executable(name: "incident-scheduler", targets: ["incident-scheduler"]),
        .executable(name: "incidents", targets: ["incidents"]),
    ],
    targets: [
        // C libraries from Debian packages. Each is imported by exactly one Swift target.
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAJL", pkgConfig: "yajl", providers: [.apt(["libyajl-dev"])]),
        // gzip bodies (NDW's DATEX II .xml.gz files), inflated while they are read.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // glibc's wcwidth(3), for aligning Korean text in tables.
        .systemLibrary(name: "CTerminal"),
        // SIGINT/SIGTERM for a command with nothing to cancel, without a thread (ProcessSignals).
        .target(name: "CProcessSignals"),
        // Libraries opened on first use (dlopen), so that a query loads only what it uses
        // (docs/development.md, "C libraries opened on first use"): each wrapper defines the
        // functions its Swift target calls, with the header's signatures, over CLibraryLoader.
        .target(name: "CLibraryLoader"),
        // libpq (libpq-dev), for the PostgreSQL store.
        .target(name: "CLibPQ", dependencies: ["CLibraryLoader"]),
        // libxlsxwriter (libxlsxwriter-dev), for `--format xlsx` (spreadsheets with real dates, in constant memory).
        .target(name: "CXLSX", dependencies: ["CLibraryLoader"]),
        // libcurl (libcurl4-openssl-dev), under Foundation's URLSession: a static build calls it through these.
        .target(name: "CCurl", dependencies: ["CLibraryLoader"]),
        // OpenSSL's libcrypto (libssl-dev), for the HMAC-SHA256 that signs watch deliveries (no CryptoKit on Linux).
        .target(name: "CCrypto", dependencies: ["CLibraryLoader"]),
        // libxml2 (libxml2-dev), for the XML feeds; Debian's brings ICU and liblzma, which a query never uses.
        .target(name: "CLibXML2", dependencies: ["CLibraryLoader"]),

        // Domain: incidents, categories, instants, ports and use cases. No C, no I/O.
        .target(name: "IncidentCore", swiftSettings: metadataAccessors),
        // HTTP: routers, request building, the URLSession-based session, retries, redaction.
        .target(name: "IncidentNetworking", dependencies: ["CCurl"], swiftSettings: curlOnFirstUse + metadataAccessors),
        // Streaming XML: a libxml2 SAX2 record reader.
        .target(name: "IncidentXML", dependencies: ["CLibXML2"], swiftSettings: metadataAccessors),
        // Streaming JSON: a yajl push-parser record reader.
        .target(name: "IncidentJSON", dependencies: ["CYAJL"], swiftSettings: metadataAccessors),
        // The SQL migrations, embedded in the binary.
        .target(
            name: "IncidentMigrations",
            path: "Migrations",
            exclude: ["postgres"],
            resources: [
                .embedInCode("0001_incidents.sql"),
                .embedInCode("0002_source_state.sql"),
                .embedInCode("0003_search.sql"),
                .embedInCode("0004_run_outcomes.sql"),
                .embedInCode("0005_query_indexes.sql"),
                .embedInCode("0006_geometry_and_road_ref.sql"),
                .embedInCode("0007_source_leases.sql"),
                .embedInCode("0008_validity.sql"),
                .embedInCode("0009_publication_order.sql"),
                .embedInCode("0010_history_independent_indexes.sql"),
                .embedInCode("0011_transition_log.sql"),
                .embedInCode("0012_watch_positions.sql"),
                .embedInCode("0013_listed_intervals.sql"),
                .embedInCode("0014_provider_end_index.sql"),
                .embedInCode("0015_active_by_source.sql"),
                .embedInCode("0016_listed_hours.sql"),
                .embedInCode("0017_listed_starts.sql"),
            ]
        ),
        // The PostgreSQL schema migrations, embedded in the binary.
        .target(
            name: "IncidentPostgresMigrations",
            path: "Migrations/postgres",
            resources: [
                .embedInCode("0001_incidents.sql"),
                .embedInCode("0002_source_leases.sql"),
                .embedInCode("0003_geometry_and_road_ref.sql"),
                .embedInCode("0004_validity.sql"),
                .embedInCode("0005_publication_order.sql"),
                .embedInCode("0006_history_independent_indexes.sql"),
                .embedInCode("0007_lease_holder_token.sql"),
                .embedInCode("0008_transition_log.sql"),
                .embedInCode("0009_history_independent_runs.sql"),
                .embedInCode("0010_watch_positions.sql"),
                .embedInCode("0011_listed_intervals.sql"),
                .embedInCode("0012_incident_counts.sql"),
                .embedInCode("0013_provider_end_index.sql"),
                .embedInCode("0014_active_by_source.sql"),
            ]
        ),
        // SQLite: connection/statement wrappers, migrator, the incident repository.
        .target(name: "IncidentSQLite", dependencies: ["CSQLite3", "IncidentCore", "IncidentMigrations"], swiftSettings: metadataAccessors),
        // PostgreSQL: the shared store for several scheduler hosts (libpq), the same ports.
        .target(name: "IncidentPostgres", dependencies: ["CLibPQ", "IncidentCore", "IncidentPostgresMigrations"], swiftSettings: metadataAccessors),
        // Providers: one folder each (router, record reader, mapper).
        .target(name: "IncidentFeeds", dependencies: ["CZlib", "IncidentCore", "IncidentNetworking", "IncidentXML", "IncidentJSON"],
                swiftSettings: curlOnFirstUse + metadataAccessors),
        // Configuration, argument parsing, commands, logging: the composition root.
        .target(name: "IncidentApp", dependencies: ["CCrypto", "CProcessSignals", "CTerminal", "CXLSX", "IncidentCore", "IncidentNetworking", "IncidentFeeds", "IncidentJSON", "IncidentSQLite", "IncidentPostgres", "IncidentHTTP"],
                swiftSettings: curlOnFirstUse + metadataAccessors),

        .executableTarget(name: "incident-scheduler", dependencies: ["IncidentApp"], swiftSettings: curlOnFirstUse + metadataAccessors),
        .executableTarget(name: "incidents", dependencies: ["IncidentApp"], swiftSettings: curlOnFirstUse + metadataAccessors),
        // Scripts/bench-json's reader: JSONRecordReader over one file, nothing else.
        .executableTarget(name: "bench-json", dependencies: ["IncidentJSON"]),

        // Shared by the test targets: fixtures, the loopback HTTP server, process runner.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "IncidentCoreTests", dependencies: ["IncidentCore", "TestSupport"]),
        .testTarget(name: "IncidentNetworkingTests", dependencies: ["IncidentNetworking", "TestSupport"]),
        .testTarget(name: "IncidentXMLTests", dependencies: ["IncidentXML", "TestSupport"]),
        .testTarget(name: "IncidentJSONTests", dependencies: ["IncidentJSON", "TestSupport"]),
        .testTarget(name: "IncidentSQLiteTests", dependencies: ["IncidentSQLite", "IncidentCore", "TestSupport"]),
        .testTarget(name: "IncidentFeedsTests", dependencies: ["IncidentFeeds", "IncidentCore", "IncidentXML", "IncidentJSON", "IncidentNetworking", "TestSupport"]),
        .testTarget(name: "IncidentAppTests", dependencies: ["IncidentApp", "IncidentCore", "IncidentFeeds", "IncidentJSON", "IncidentNetworking", "IncidentSQLite", "TestSupport"]),
        // The store ports' tests, one body per test run against SQLite and PostgreSQL.
        .testTarget(name: "StoreConformanceTests", dependencies: ["IncidentSQLite", "IncidentPostgres", "IncidentCore", "IncidentFeeds", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "IncidentSQLite", "IncidentCore"]),

        // `incidents serve`: libmicrohttpd (imported by IncidentHTTP only) and the HTTP server on it.
        .target(name: "CMicroHTTPD", dependencies: ["CLibraryLoader"]),
        .target(name: "IncidentHTTP", dependencies: ["CMicroHTTPD"], swiftSettings: metadataAccessors),
    ],
    swiftLanguageModes: [.v6]
)
