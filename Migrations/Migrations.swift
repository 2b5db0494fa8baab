/// The SQL migrations of the incidents database, embedded in the binary so an installed
/// executable needs no resource files.
///
/// Each file is `NNNN_description.sql`, applied in order of `NNNN`, forward-only: a file never
/// changes once it has landed (the migrator refuses a database whose recorded checksum differs).
/// To add one: create the file, list it in Package.swift's `resources`, and append it here
/// (a test checks that every file in Migrations/ is listed). SwiftPM names the embedded bytes
/// after the file, replacing a leading digit with `_` (`0001_x.sql` → `_001_x_sql`).
public enum BundledMigrations {
    /// `(file name, SQL text)` in application order.
    public static let all: [(fileName: String, sql: String)] = [
        ("0001_incidents.sql", String(decoding: PackageResources._001_incidents_sql, as: UTF8.self)),
        ("0002_source_state.sql", String(decoding: PackageResources._002_source_state_sql, as: UTF8.self)),
        ("0003_search.sql", String(decoding: PackageResources._003_search_sql, as: UTF8.self)),
        ("0004_run_outcomes.sql", String(decoding: PackageResources._004_run_outcomes_sql, as: UTF8.self)),
        ("0005_query_indexes.sql", String(decoding: PackageResources._005_query_indexes_sql, as: UTF8.self)),
        ("0006_geometry_and_road_ref.sql", String(decoding: PackageResources._006_geometry_and_road_ref_sql, as: UTF8.self)),
        ("0007_source_leases.sql", String(decoding: PackageResources._007_source_leases_sql, as: UTF8.self)),
        ("0008_validity.sql", String(decoding: PackageResources._008_validity_sql, as: UTF8.self)),
        ("0009_publication_order.sql", String(decoding: PackageResources._009_publication_order_sql, as: UTF8.self)),
        ("0010_history_independent_indexes.sql",
         String(decoding: PackageResources._010_history_independent_indexes_sql, as: UTF8.self)),
        ("0011_transition_log.sql", String(decoding: PackageResources._011_transition_log_sql, as: UTF8.self)),
        ("0012_watch_positions.sql", String(decoding: PackageResources._012_watch_positions_sql, as: UTF8.self)),
        ("0013_listed_intervals.sql", String(decoding: PackageResources._013_listed_intervals_sql, as: UTF8.self)),
        ("0014_provider_end_index.sql", String(decoding: PackageResources._014_provider_end_index_sql, as: UTF8.self)),
        ("0015_active_by_source.sql", String(decoding: PackageResources._015_active_by_source_sql, as: UTF8.self)),
        ("0016_listed_hours.sql", String(decoding: PackageResources._016_listed_hours_sql, as: UTF8.self)),
        ("0017_listed_starts.sql", String(decoding: PackageResources._017_listed_starts_sql, as: UTF8.self)),
    ]
}
