/// The PostgreSQL schema migrations (`Migrations/postgres/NNNN_description.sql`), embedded in
/// the binary so an installed executable needs no resource files. The same rules as the SQLite
/// ones (`Migrations/`): applied in order of `NNNN`, forward-only, a file never changes once it
/// has landed (its checksum is recorded and checked). To add one: create the file, list it in
/// Package.swift's `resources`, and append it here (a test checks that every file is listed).
public enum BundledPostgresMigrations {
    /// `(file name, SQL text)` in application order.
    public static let all: [(fileName: String, sql: String)] = [
        ("0001_incidents.sql", String(decoding: PackageResources._001_incidents_sql, as: UTF8.self)),
        ("0002_source_leases.sql", String(decoding: PackageResources._002_source_leases_sql, as: UTF8.self)),
        ("0003_geometry_and_road_ref.sql", String(decoding: PackageResources._003_geometry_and_road_ref_sql, as: UTF8.self)),
        ("0004_validity.sql", String(decoding: PackageResources._004_validity_sql, as: UTF8.self)),
        ("0005_publication_order.sql", String(decoding: PackageResources._005_publication_order_sql, as: UTF8.self)),
        ("0006_history_independent_indexes.sql",
         String(decoding: PackageResources._006_history_independent_indexes_sql, as: UTF8.self)),
        ("0007_lease_holder_token.sql", String(decoding: PackageResources._007_lease_holder_token_sql, as: UTF8.self)),
        ("0008_transition_log.sql", String(decoding: PackageResources._008_transition_log_sql, as: UTF8.self)),
        ("0009_history_independent_runs.sql",
         String(decoding: PackageResources._009_history_independent_runs_sql, as: UTF8.self)),
        ("0010_watch_positions.sql", String(decoding: PackageResources._010_watch_positions_sql, as: UTF8.self)),
        ("0011_listed_intervals.sql", String(decoding: PackageResources._011_listed_intervals_sql, as: UTF8.self)),
        ("0012_incident_counts.sql", String(decoding: PackageResources._012_incident_counts_sql, as: UTF8.self)),
        ("0013_provider_end_index.sql", String(decoding: PackageResources._013_provider_end_index_sql, as: UTF8.self)),
        ("0014_active_by_source.sql", String(decoding: PackageResources._014_active_by_source_sql, as: UTF8.self)),
    ]
}
