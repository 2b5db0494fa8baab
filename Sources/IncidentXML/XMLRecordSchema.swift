/// An element (or attribute) name: local name plus namespace URI.
///
/// `namespaceURI == nil` matches the local name in any namespace, including none. A non-nil
/// `namespaceURI` matches only that exact URI (compared byte for byte, as XML Namespaces 1.0
/// §2.3 requires); the prefix a document uses never matters.
public struct XMLName: Hashable, Sendable, CustomStringConvertible {
    /// The local part of the name, e.g. `situationRecord` for `sit:situationRecord`.
    public var localName: String
    /// The namespace URI to match, or nil for "any namespace or none".
    public var namespaceURI: String?

    /// Creates a name; see the type's documentation for how `namespaceURI` matches.
    public init(_ localName: String, namespaceURI: String? = nil) {
        self.localName = localName
        self.namespaceURI = namespaceURI
    }

    /// `localName`, or `{namespaceURI}localName` (Clark notation) when a URI is set.
    public var description: String {
        if let namespaceURI { return "{\(namespaceURI)}\(localName)" }
        return localName
    }
}

/// What an `XMLRecordReader` extracts: which elements delimit records and which values to keep.
///
/// - `recordElements`: elements that each delimit one record (GITS `itemList`; ITS `item` or
///   `data`; DATEX II `situationRecord`). Records do not nest: inside a record, a record element
///   is an ordinary element.
/// - `fields`: the wanted elements at any depth under a record. `XMLRecord.values` is indexed
///   like this array. When several entries match one element, the first entry wins.
/// - `envelopeFields`: wanted elements outside any record (GITS `headerCd`, `headerMsg`; ITS
///   `resultCode`; data.go.kr `returnReasonCode`). `XMLEnvelope.values` is indexed like this
///   array.
/// - `recordAttributes`: attributes to read from the record element itself (DATEX II
///   `situationRecord id="…" version="…"`). `XMLRecord.attributes` is indexed like this array.
///   Attributes of all other elements are ignored.
public struct XMLRecordSchema: Sendable {
    /// Elements that delimit one record.
    public let recordElements: [XMLName]
    /// Wanted elements under a record; record values are indexed like this array.
    public let fields: [XMLName]
    /// Wanted elements outside any record; envelope values are indexed like this array.
    public let envelopeFields: [XMLName]
    /// Wanted attributes of the record element; record attributes are indexed like this array.
    public let recordAttributes: [XMLName]

    /// Creates a schema; see the type's documentation for the meaning of each list.
    public init(
        recordElements: [XMLName],
        fields: [XMLName],
        envelopeFields: [XMLName] = [],
        recordAttributes: [XMLName] = []
    ) {
        self.recordElements = recordElements
        self.fields = fields
        self.envelopeFields = envelopeFields
        self.recordAttributes = recordAttributes
    }
}

/// One record: the values of the schema's fields inside one record element.
///
/// A value is the element's text content (text and CDATA of the element and its descendants,
/// character and entity references resolved) with surrounding XML whitespace (space, tab, CR,
/// LF) trimmed. It is nil when the element is absent, empty (`<a/>`, `<a></a>`) or holds only
/// whitespace. When a field occurs more than once in one record, the first occurrence wins
/// (even if it is empty).
public struct XMLRecord: Sendable, Equatable {
    /// Field values, indexed like `XMLRecordSchema.fields`.
    public var values: [String?]
    /// Values of the record element's attributes, indexed like `XMLRecordSchema.recordAttributes`
    /// (untrimmed; attribute-value normalization per XML 1.0 §3.3.3; nil when absent).
    public var attributes: [String?]
    /// Index into `XMLRecordSchema.recordElements` of the element that delimited this record.
    public var recordElementIndex: Int
    /// 1-based line of the record's start tag (where libxml2 finished reading it).
    public var line: Int

    /// Creates a record; readers build these, tests may too.
    public init(values: [String?], attributes: [String?] = [], recordElementIndex: Int = 0, line: Int = 0) {
        self.values = values
        self.attributes = attributes
        self.recordElementIndex = recordElementIndex
        self.line = line
    }

    /// The value of field `index` (an index into `XMLRecordSchema.fields`); nil if out of range.
    public subscript(_ index: Int) -> String? {
        values.indices.contains(index) ? values[index] : nil
    }
}

/// The document's envelope: its root element and the envelope fields seen so far.
///
/// Values follow the same rules as `XMLRecord.values` and are indexed like
/// `XMLRecordSchema.envelopeFields`. Text inside records never counts toward an envelope value.
/// The envelope passed with a record holds what was read before that record ended; fields that
/// come after the last record are in `XMLRecordReader.envelope` once `finish()` returns.
public struct XMLEnvelope: Sendable, Equatable {
    /// The document's root element, known once its start tag was read.
    public var rootElement: XMLName?
    /// Envelope field values, indexed like `XMLRecordSchema.envelopeFields`.
    public var values: [String?]

    /// Creates an envelope; readers build these, tests may too.
    public init(rootElement: XMLName? = nil, values: [String?]) {
        self.rootElement = rootElement
        self.values = values
    }

    /// The value of envelope field `index`; nil if out of range.
    public subscript(_ index: Int) -> String? {
        values.indices.contains(index) ? values[index] : nil
    }
}
