/// A transition log written as a database of the version before the listed intervals (SQLite
/// migration 0013, PostgreSQL 0011) holds it, for both stores' migration tests: A appeared at
/// 10:00, was cleared at 10:10 and listed again at 10:20; B appeared at 10:00, was revised at
/// 10:20 and cleared at 10:30:30; a record of no incident was set aside. Its intervals: A
/// 10:00–10:10 and 10:20–open, B 10:00–10:30:30.
public enum ListedIntervalFixture {
    /// The SQL, for a store whose log is keyed by `key` (`id` in SQLite, `cursor` in PostgreSQL).
    public static func sql(key: String) -> String {
        """
        INSERT INTO incidents (id, source, external_id, category, content_hash, first_seen_at, last_seen_at, first_seen_run_id,
                               last_seen_run_id, cleared_at)
        VALUES (1, 'gits', 'A', 'accident', 0, '2024-01-01T10:00:00Z', '2024-01-01T10:20:00Z', 1, 3, NULL),
               (2, 'gits', 'B', 'accident', 0, '2024-01-01T10:00:00Z', '2024-01-01T10:20:00Z', 1, 3, '2024-01-01T10:30:30Z');
        INSERT INTO incident_transitions (\(key), incident_id, source, external_id, run_id, kind, at) VALUES
            (1, 1, 'gits', 'A', 1, 'appeared', '2024-01-01T10:00:00Z'),
            (2, 2, 'gits', 'B', 1, 'appeared', '2024-01-01T10:00:00Z'),
            (3, 1, 'gits', 'A', 2, 'cleared', '2024-01-01T10:10:00Z'),
            (4, 1, 'gits', 'A', 3, 'reopened', '2024-01-01T10:20:00Z'),
            (5, 2, 'gits', 'B', 3, 'revised', '2024-01-01T10:20:00Z'),
            (6, 2, 'gits', 'B', 4, 'cleared', '2024-01-01T10:30:30Z'),
            (7, NULL, 'gits', NULL, 4, 'quarantined', '2024-01-01T10:30:30Z');
        """
    }
}
