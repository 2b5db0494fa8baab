/// Resource limits that bound what one untrusted document can make a reader do.
///
/// Every limit ends the parse with an `XMLParseError` of the kind named below, in time linear
/// in the input read so far and memory bounded by the limits (not by the document), except
/// that a *record* over `maxRecordBytes` or holding a text over `maxTextBytes` is valid input
/// that is too large: it is read on keeping only values of at most 1 KiB (its id) and no more
/// occurrences, and delivered with a problem naming the limit, for the caller to set aside.
/// The defaults fit every real feed we know (the largest GITS text is a few hundred bytes; a
/// GITS record is about 590 bytes) and real geometries: a `posList` of 100,000 positions is
/// about 2.4 MB of text.
public struct XMLLimits: Sendable, Equatable {
    /// Most bytes (UTF-8) of one run of text between two tags, and of one captured value.
    /// Kind `.textTooLarge` outside records; inside one, the record is delivered marked (see
    /// the type's documentation). Default 16 MiB.
    public var maxTextBytes: Int
    /// Most bytes inside one record element: its text (UTF-8), wanted or not, plus 32 bytes
    /// and the attribute values of every kept occurrence of a repeated field or of a field
    /// that reads attributes (so a record of a million empty occurrences is bounded too).
    /// Larger records are delivered marked (see the type's documentation). Default 32 MiB.
    public var maxRecordBytes: Int
    /// Deepest element nesting; the root element is depth 1. Kind `.tooDeep`. Default 256.
    public var maxDepth: Int
    /// Most input libxml2 may hold unparsed while it waits for the end of one piece of markup:
    /// a start tag with its attributes, a comment, a processing instruction, the DTD, or a CDATA
    /// section (libxml2 2.9's push parser buffers a CDATA section to its end). Checked after
    /// every piece of at most 256 KiB handed to libxml2. Kind `.markupTooLarge`. Default 2 MiB.
    public var maxMarkupBytes: Int
    /// Most bytes of internal-entity replacement text expanded in one document: every time
    /// libxml2 looks a declared entity up (at least once per reference, in text or attribute
    /// values; nested references count again) its replacement length plus one is counted. Kind
    /// `.entityExpansion`. Default 1 MiB. libxml2's own loop detection may stop a billion-laughs
    /// document earlier, also as `.entityExpansion`.
    public var maxEntityExpansionBytes: Int

    /// Creates limits; every value must be positive.
    public init(
        maxTextBytes: Int = 16 << 20,
        maxRecordBytes: Int = 32 << 20,
        maxDepth: Int = 256,
        maxMarkupBytes: Int = 2 << 20,
        maxEntityExpansionBytes: Int = 1 << 20
    ) {
        self.maxTextBytes = max(1, maxTextBytes)
        self.maxRecordBytes = max(1, maxRecordBytes)
        self.maxDepth = max(1, maxDepth)
        self.maxMarkupBytes = max(1, maxMarkupBytes)
        self.maxEntityExpansionBytes = max(1, maxEntityExpansionBytes)
    }

    /// 16 MiB text, 32 MiB record, depth 256, 2 MiB pending markup, 1 MiB entity expansion.
    public static let `default` = XMLLimits()
}
