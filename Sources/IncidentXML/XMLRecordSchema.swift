/// An element or attribute name: local name plus namespace URI, matched exactly.
///
/// Both parts must be equal for a name to match (XML Namespaces 1.0 §2.3: URIs compared byte
/// for byte; the prefix a document uses never matters). `namespaceURI == nil` means *no
/// namespace*: an unprefixed element outside any default namespace declaration, and every
/// unprefixed attribute (default namespaces do not apply to attributes, §6.2). There is no
/// wildcard: an element in another namespace with the same local name never matches.
public struct XMLName: Hashable, Sendable, CustomStringConvertible {
    /// The local part of the name, e.g. `situationRecord` for `sit:situationRecord`.
    public var localName: String
    /// The namespace URI, or nil for no namespace.
    public var namespaceURI: String?

    /// Creates a name; `namespaceURI` nil means no namespace (see the type's documentation).
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

/// An attribute to read, and how to read its value.
///
/// A plain attribute's value is its normalized value (XML 1.0 §3.3.3), untrimmed, with
/// character and entity references resolved. A QName-valued attribute (`resolvesQName`, e.g.
/// XML Schema's `xsi:type="sit:Accident"`) is trimmed and resolved through the namespace
/// declarations in scope at its element (XML Schema Part 2 §3.2.18 `QName`): the value becomes
/// `{namespaceURI}localName`, or just `localName` when it has no prefix and no default namespace
/// is in scope (the same text as `XMLName.description`). A prefix with no declaration in scope,
/// or a value that is not a QName, gives nil and a problem on the record (or envelope).
public struct XMLAttribute: Hashable, Sendable, CustomStringConvertible {
    /// The attribute's name; unprefixed attributes have no namespace.
    public var name: XMLName
    /// Whether the value is a QName to resolve (see the type's documentation).
    public var resolvesQName: Bool

    /// Creates an attribute to read.
    public init(_ name: XMLName, resolvesQName: Bool = false) {
        self.name = name
        self.resolvesQName = resolvesQName
    }

    /// `xsi:type` (namespace `http://www.w3.org/2001/XMLSchema-instance`), resolved as a QName:
    /// the DATEX II record and location kinds.
    public static let xsiType = XMLAttribute(
        XMLName("type", namespaceURI: "http://www.w3.org/2001/XMLSchema-instance"), resolvesQName: true)

    /// The attribute's name, with `(QName)` when its value is resolved.
    public var description: String { resolvesQName ? "\(name) (QName)" : name.description }
}

/// One value to read from each record (or from the envelope): an element chosen by the end of
/// its path, its text and, optionally, some of its attributes.
///
/// - `path`: the element's name, preceded by as many of its ancestors' names as needed to say
///   which element is meant; it matches an element whose own name is the last entry and whose
///   nearest ancestors are the entries before it, in order (a suffix of the element's full
///   path). `[overallStartTime]` matches that element anywhere;
///   `[validityTimeSpecification, overallStartTime]` only as a child of
///   `validityTimeSpecification`. Every name is matched exactly, namespace included.
/// - `cardinality`: `.single` (the element occurs at most once per record: a second occurrence
///   is a problem of that record, and the field's value is nil) or `.repeated` (every
///   occurrence is kept, in document order, in `XMLRecord.occurrences`). Envelope fields are
///   always single.
/// - `attributes`: attributes of the field's element to read with each occurrence.
/// - `capturesText`: false to read only the attributes (the text of a large container element
///   such as DATEX II `groupOfLocations` is then not collected).
public struct XMLField: Sendable, CustomStringConvertible {
    /// Whether a field occurs at most once per record or may repeat.
    public enum Cardinality: Sendable, Equatable {
        /// At most once per record; more is a problem of the record.
        case single
        /// Any number of times; each occurrence is kept.
        case repeated
    }

    /// The element's name, preceded by the names of its nearest ancestors; never empty.
    public let path: [XMLName]
    /// Single or repeated.
    public let cardinality: Cardinality
    /// Attributes of the element to read with each occurrence.
    public let attributes: [XMLAttribute]
    /// Whether the element's text is read.
    public let capturesText: Bool

    /// Creates a field. `path` must not be empty (a programming error that traps).
    public init(_ path: [XMLName], cardinality: Cardinality = .single, attributes: [XMLAttribute] = [],
                capturesText: Bool = true) {
        precondition(!path.isEmpty, "XMLField needs at least one name in its path")
        self.path = path
        self.cardinality = cardinality
        self.attributes = attributes
        self.capturesText = capturesText
    }

    /// Creates a field matched by its element's name alone.
    public init(_ name: XMLName, cardinality: Cardinality = .single, attributes: [XMLAttribute] = [],
                capturesText: Bool = true) {
        self.init([name], cardinality: cardinality, attributes: attributes, capturesText: capturesText)
    }

    /// The path's local names joined by `/`, as problems quote it, e.g.
    /// `validityTimeSpecification/overallStartTime`.
    public var description: String { path.map(\.localName).joined(separator: "/") }
}

/// An attribute of an ancestor element attached to every record inside it, e.g. DATEX II
/// `situation/@id` and `@version` for each `situationRecord` of that situation.
///
/// The value comes from the nearest enclosing element named `element` outside the record (nil
/// when there is none, or it lacks the attribute).
public struct XMLContextAttribute: Hashable, Sendable {
    /// The ancestor element.
    public var element: XMLName
    /// The attribute of that element.
    public var attribute: XMLAttribute

    /// Creates a context attribute.
    public init(element: XMLName, attribute: XMLAttribute) {
        self.element = element
        self.attribute = attribute
    }
}

/// What an `XMLRecordReader` extracts: which elements delimit records and which values to keep.
///
/// - `recordElements`: elements that each delimit one record (GITS `itemList`; ITS `item` or
///   `data`; DATEX II `situationRecord`). Records do not nest: inside a record, a record element
///   is an ordinary element.
/// - `fields`: what to read from each record (see `XMLField`). `XMLRecord.values` is indexed
///   like this array. Every field whose path matches an element reads it.
/// - `envelopeFields`: values read outside any record (GITS `headerCd`, `headerMsg`; ITS
///   `resultCode`; data.go.kr `returnReasonCode`; DATEX II `publicationTime`). Always single.
///   `XMLEnvelope.values` is indexed like this array.
/// - `recordAttributes`: attributes of the record element itself (DATEX II `situationRecord`
///   `id`, `version`, `xsi:type`). `XMLRecord.attributes` is indexed like this array.
/// - `contextAttributes`: attributes of enclosing elements attached to each record.
///   `XMLRecord.context` is indexed like this array.
///
/// Namespaces: the schema's namespaces are those of every element name in it (record
/// elements, field and envelope paths, context elements; no namespace counts as one). An
/// element in any other namespace is foreign: inside a record, or inside a field being read,
/// it is skipped with everything in it (its text never feeds a value and nothing under it
/// matches: a vendor's `<meta:regSeq xmlns:meta="…">` inside a GITS `itemList` is ignored).
/// Outside records and fields, foreign elements are transparent wrappers (a SOAP `Envelope`
/// and `Body` around a DATEX II payload need not be named).
public struct XMLRecordSchema: Sendable {
    /// Elements that delimit one record.
    public let recordElements: [XMLName]
    /// What to read from each record; record values are indexed like this array.
    public let fields: [XMLField]
    /// What to read outside records; envelope values are indexed like this array.
    public let envelopeFields: [XMLField]
    /// Attributes of the record element; record attributes are indexed like this array.
    public let recordAttributes: [XMLAttribute]
    /// Attributes of enclosing elements; record context values are indexed like this array.
    public let contextAttributes: [XMLContextAttribute]
    /// Other namespace URIs read as the schema's: an element (or resolved QName value) in a
    /// namespace that is none of the schema's but ends with an alias's `suffix` is read as if
    /// it were in the alias's `namespaceURI`. Empty by default: names match exactly.
    public var namespaceAliases: [XMLNamespaceAlias] = []

    /// Creates a schema; see the type's documentation for the meaning of each list. An
    /// envelope field must be `.single` (a programming error that traps).
    public init(
        recordElements: [XMLName],
        fields: [XMLField],
        envelopeFields: [XMLField] = [],
        recordAttributes: [XMLAttribute] = [],
        contextAttributes: [XMLContextAttribute] = []
    ) {
        precondition(envelopeFields.allSatisfy { $0.cardinality == .single }, "envelope fields are single")
        self.recordElements = recordElements
        self.fields = fields
        self.envelopeFields = envelopeFields
        self.recordAttributes = recordAttributes
        self.contextAttributes = contextAttributes
    }

    /// Creates a schema of single fields matched by their element's name, and plain record
    /// attributes: the shape of the Korean providers' flat documents.
    public init(
        recordElements: [XMLName],
        fields: [XMLName],
        envelopeFields: [XMLName] = [],
        recordAttributes: [XMLName] = []
    ) {
        self.init(recordElements: recordElements,
                  fields: fields.map { XMLField($0) },
                  envelopeFields: envelopeFields.map { XMLField($0) },
                  recordAttributes: recordAttributes.map { XMLAttribute($0) })
    }
}

/// A family of namespace URIs read as one of a schema's namespaces (``XMLRecordSchema/namespaceAliases``):
/// a URI ending with `suffix` (e.g. `/schema/3/situation`, which Spain's DGT publishes as
/// `http://levelC/schema/3/situation`) stands for `namespaceURI`.
public struct XMLNamespaceAlias: Hashable, Sendable {
    /// The end of a document's namespace URI, e.g. `/schema/3/situation`.
    public var suffix: String
    /// The schema's namespace URI it stands for.
    public var namespaceURI: String

    public init(suffix: String, namespaceURI: String) {
        self.suffix = suffix
        self.namespaceURI = namespaceURI
    }
}

/// One occurrence of a repeated field, or of a field that reads attributes.
public struct XMLOccurrence: Sendable, Equatable {
    /// Index into `XMLRecordSchema.fields`.
    public var field: Int
    /// The element's text, as `XMLRecord.values` gives it (nil when empty, or when the field
    /// does not capture text).
    public var text: String?
    /// The element's attribute values, indexed like the field's `attributes` (nil when absent).
    public var attributes: [String?]

    /// Creates an occurrence; readers build these, tests may too.
    public init(field: Int, text: String?, attributes: [String?] = []) {
        self.field = field
        self.text = text
        self.attributes = attributes
    }
}

/// One record: what the schema's fields and attributes read inside one record element.
///
/// A text value is the element's text content (text and CDATA of the element and its
/// descendants, except foreign elements; character and entity references resolved) with
/// surrounding XML whitespace (space, tab, CR, LF) trimmed; nil when empty (`<a/>`, `<a></a>`)
/// or whitespace only.
///
/// A record with `problems` is ambiguous or incomplete (a single field that occurs more than
/// once — its value is then nil, never the first or the last —, a repeated field nested in
/// itself, a QName with an undeclared prefix): quarantine it rather than store it. The rest of
/// the document is read normally. `repairs` counts characters the reader substituted so the
/// record could be read at all (see `XMLRecordReader`, "Repairs").
public struct XMLRecord: Sendable, Equatable {
    /// Text of each single field, indexed like `XMLRecordSchema.fields`: nil when absent, empty,
    /// repeated (see `occurrences`), not capturing text, or occurring more than once.
    public var values: [String?]
    /// Every occurrence of the repeated fields, and the occurrence of each single field that
    /// reads attributes, in document order (of their start tags).
    public var occurrences: [XMLOccurrence]
    /// Values of the record element's attributes, indexed like `XMLRecordSchema.recordAttributes`
    /// (nil when absent).
    public var attributes: [String?]
    /// Values of the context attributes, indexed like `XMLRecordSchema.contextAttributes`.
    public var context: [String?]
    /// Why this record should not be trusted as read, e.g. `regSeq occurs 2 times`; empty for a
    /// sound record.
    public var problems: [String]
    /// Characters substituted inside this record (illegal characters and references read as
    /// U+FFFD, HTML entities read as their characters).
    public var repairs: Int
    /// Index into `XMLRecordSchema.recordElements` of the element that delimited this record.
    public var recordElementIndex: Int
    /// 1-based line of the record's start tag (where libxml2 finished reading it).
    public var line: Int
    /// The bytes `XMLLimits.maxRecordBytes` counted in the record (its text, and 32 per kept
    /// occurrence): a measure of its size for callers that queue records. Not compared by `==`.
    public var byteCount = 0
    /// The record passed `XMLLimits.maxRecordBytes` or held a text over `maxTextBytes`: only
    /// its values of at most 1 KiB were read (its id), and `problems` starts with the limit.
    public var isOversized = false

    /// Records are equal when everything read is equal (`byteCount` aside).
    public static func == (a: XMLRecord, b: XMLRecord) -> Bool {
        a.values == b.values && a.occurrences == b.occurrences && a.attributes == b.attributes && a.context == b.context
            && a.problems == b.problems && a.repairs == b.repairs && a.recordElementIndex == b.recordElementIndex && a.line == b.line
            && a.isOversized == b.isOversized
    }

    /// Creates a record; readers build these, tests may too.
    public init(values: [String?], attributes: [String?] = [], recordElementIndex: Int = 0, line: Int = 0,
                occurrences: [XMLOccurrence] = [], context: [String?] = [], problems: [String] = [],
                repairs: Int = 0) {
        self.values = values
        self.occurrences = occurrences
        self.attributes = attributes
        self.context = context
        self.problems = problems
        self.repairs = repairs
        self.recordElementIndex = recordElementIndex
        self.line = line
    }

    /// The value of single field `index` (an index into `XMLRecordSchema.fields`); nil if out
    /// of range.
    public subscript(_ index: Int) -> String? {
        values.indices.contains(index) ? values[index] : nil
    }

    /// The occurrences of field `index`, in document order.
    public func occurrences(of index: Int) -> [XMLOccurrence] {
        occurrences.filter { $0.field == index }
    }
}

/// The document's envelope: its root element and the envelope fields seen so far.
///
/// Values follow the same rules as `XMLRecord.values` and are indexed like
/// `XMLRecordSchema.envelopeFields`. Text inside records never counts toward an envelope value.
/// The envelope passed with a record holds what was read before that record ended; fields that
/// come after the last record are in `XMLRecordReader.envelope` once `finish()` returns. An
/// envelope field that occurs more than once is nil and named in `problems`.
public struct XMLEnvelope: Sendable, Equatable {
    /// The document's root element, known once its start tag was read.
    public var rootElement: XMLName?
    /// Envelope field values, indexed like `XMLRecordSchema.envelopeFields`.
    public var values: [String?]
    /// Attribute values of each envelope field, indexed like `XMLRecordSchema.envelopeFields`,
    /// then like that field's `attributes` (empty for a field that reads none).
    public var attributes: [[String?]]
    /// Why the envelope is ambiguous, e.g. `headerCd occurs more than once`; empty when sound.
    public var problems: [String]

    /// Creates an envelope; readers build these, tests may too.
    public init(rootElement: XMLName? = nil, values: [String?], attributes: [[String?]]? = nil, problems: [String] = []) {
        self.rootElement = rootElement
        self.values = values
        self.attributes = attributes ?? Array(repeating: [], count: values.count)
        self.problems = problems
    }

    /// The value of envelope field `index`; nil if out of range.
    public subscript(_ index: Int) -> String? {
        values.indices.contains(index) ? values[index] : nil
    }
}
