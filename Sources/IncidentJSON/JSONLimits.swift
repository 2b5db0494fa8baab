/// Resource limits that bound what one untrusted document can make a `JSONRecordReader` do.
///
/// The document as a whole has no size limit: it is streamed, and memory is bounded by these
/// limits, not by the document. Each limit ends the parse with a `JSONParseError` of the kind
/// named below, as soon as the input shows it is exceeded (before the over-long string or
/// number is buffered whole), except a record over `maxRecordBytes`, which is delivered
/// marked `JSONRecord.isOversized` for the caller to set aside. Defaults fit every real feed we
/// know with a wide margin: the largest value in the samples is a WZDx `description` of a few
/// hundred bytes, the largest record in the samples the Caltrans WZDx v2 feature (22 KB of JSON,
/// 80 KB as `maxRecordBytes` counts; a CDOT feature is 2 KB, 5.5 KB counted); a work zone's
/// LineString of 100,000 positions along a long corridor is 2.5 MB of JSON, 14.3 MB counted.
public struct JSONLimits: Sendable, Equatable {
    /// Deepest nesting of objects and arrays; the root container is depth 1. Kind `.tooDeep`.
    /// Default 256.
    public var maxDepth: Int
    /// Most bytes of one string or key, counted in the document between the quotes (escapes as
    /// written). Kind `.stringTooLarge`. Default 1 MiB.
    public var maxStringBytes: Int
    /// Most bytes of one number as written (also bounds a run of letters, e.g. `truefalse…`).
    /// Kind `.numberTooLarge`. Default 1 KiB.
    public var maxNumberBytes: Int
    /// Most bytes of one record, and of one envelope value, as an estimate of the memory its
    /// `JSONValue` tree takes: 24 bytes per value, 16 per key and 72 per object or array, plus
    /// the UTF-8 bytes of every string, key and number. A larger record is read on without its
    /// lists (memory stays bounded by this limit plus 64 KiB) and delivered with
    /// `JSONRecord.isOversized` and a problem naming both sizes; a larger envelope value ends
    /// the parse with kind `.recordTooLarge`. Default 32 MiB (a LineString of 230,000 positions).
    public var maxRecordBytes: Int

    /// Creates limits; each value is raised to at least 1.
    public init(
        maxDepth: Int = 256,
        maxStringBytes: Int = 1 << 20,
        maxNumberBytes: Int = 1 << 10,
        maxRecordBytes: Int = 32 << 20
    ) {
        self.maxDepth = max(1, maxDepth)
        self.maxStringBytes = max(1, maxStringBytes)
        self.maxNumberBytes = max(1, maxNumberBytes)
        self.maxRecordBytes = max(1, maxRecordBytes)
    }

    /// Depth 256, string 1 MiB, number 1 KiB, record 32 MiB.
    public static let `default` = JSONLimits()
}
