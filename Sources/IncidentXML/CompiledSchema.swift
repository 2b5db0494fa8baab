internal import CLibXML2

/// A schema name as bytes, for comparing with libxml2's NUL-terminated names.
struct CompiledName {
    let local: [UInt8]
    let uri: [UInt8]?

    init(_ name: XMLName) {
        local = Array(name.localName.utf8)
        uri = name.namespaceURI.map { Array($0.utf8) }
    }

    /// Exact match: same local name, and the same namespace URI or no namespace on both sides.
    func matches(_ name: UnsafePointer<xmlChar>, _ nameURI: UnsafePointer<xmlChar>?) -> Bool {
        equalsCString(local, name) && Self.sameNamespace(uri, nameURI)
    }

    /// Whether `uri` (nil: no namespace) names the same namespace as libxml2's `nameURI` (NULL
    /// or empty: no namespace).
    static func sameNamespace(_ uri: [UInt8]?, _ nameURI: UnsafePointer<xmlChar>?) -> Bool {
        guard let nameURI, nameURI[0] != 0 else { return uri == nil || uri?.isEmpty == true }
        guard let uri else { return false }
        return equalsCString(uri, nameURI)
    }
}

/// An attribute to read, compiled.
struct CompiledAttribute {
    let name: CompiledName
    let resolvesQName: Bool
    /// `prefix:local` as problems quote it (`xsi:type` for the XML Schema instance namespace).
    let label: String

    init(_ attribute: XMLAttribute) {
        name = CompiledName(attribute.name)
        resolvesQName = attribute.resolvesQName
        let xsi = "http://www.w3.org/2001/XMLSchema-instance"
        label = attribute.name.namespaceURI == xsi ? "xsi:\(attribute.name.localName)" : attribute.name.localName
    }
}

/// The schema turned into the tables the SAX callbacks read: every distinct element name gets
/// an id; each field slot (record fields, then envelope fields) its path as ids; each name the
/// field slots whose path ends with it.
struct CompiledSchema {
    let names: [CompiledName]
    /// What a start tag of each name means, without the cache's pointer bits.
    let nameSlots: [NameSlot]
    /// Namespaces of the schema's element names (nil: no namespace).
    let namespaces: [[UInt8]?]
    let fieldInfos: [FieldInfo]
    let paths: [Int32]
    let candidates: [Int32]
    let descriptions: [String]
    let recordAttributes: [CompiledAttribute]
    /// Per field slot, the attributes it reads.
    let fieldAttributes: [[CompiledAttribute]]
    /// Per name id of a context element: (index into contextAttributes, attribute).
    let contextAttributes: [Int32: [(index: Int, attribute: CompiledAttribute)]]
    let recordElementNames: [String]
    /// `XMLRecordSchema.namespaceAliases`: (suffix, schema namespace) as bytes.
    let aliases: [(suffix: [UInt8], uri: [UInt8])]

    init(_ schema: XMLRecordSchema) {
        var distinct: [XMLName] = []
        func id(_ name: XMLName) -> Int32 {
            if let i = distinct.firstIndex(of: name) { return Int32(i) }
            distinct.append(name)
            return Int32(distinct.count - 1)
        }
        let recordIDs = schema.recordElements.map(id)
        let contextIDs = schema.contextAttributes.map { id($0.element) }
        let slots = schema.fields.map { ($0, false) } + schema.envelopeFields.map { ($0, true) }
        var paths: [Int32] = []
        var infos: [FieldInfo] = []
        for (field, envelope) in slots {
            infos.append(FieldInfo(pathStart: Int32(paths.count), pathLength: Int32(field.path.count),
                                   repeated: field.cardinality == .repeated, readsAttributes: !field.attributes.isEmpty,
                                   capturesText: field.capturesText, envelope: envelope))
            paths += field.path.map(id)
        }

        var candidates: [Int32] = []
        var nameSlots: [NameSlot] = []
        for nameID in distinct.indices {
            var slot = NameSlot()
            slot.id = Int32(nameID)
            if let r = recordIDs.firstIndex(of: Int32(nameID)) { slot.record = Int32(r) }
            slot.context = contextIDs.contains(Int32(nameID))
            for envelope in [false, true] {
                let start = Int32(candidates.count)
                for (slotIndex, info) in infos.enumerated()
                where info.envelope == envelope && paths[Int(info.pathStart + info.pathLength - 1)] == Int32(nameID) {
                    candidates.append(Int32(slotIndex))
                }
                let count = Int32(candidates.count) - start
                if envelope {
                    (slot.envelopeStart, slot.envelopeCount) = (start, count)
                } else {
                    (slot.fieldStart, slot.fieldCount) = (start, count)
                }
            }
            if slot.fieldCount == 1 {
                let info = infos[Int(candidates[Int(slot.fieldStart)])]
                if info.pathLength == 1 && !info.repeated && !info.readsAttributes && info.capturesText {
                    slot.plainField = candidates[Int(slot.fieldStart)]
                }
            }
            nameSlots.append(slot)
        }

        var contexts: [Int32: [(index: Int, attribute: CompiledAttribute)]] = [:]
        for (index, context) in schema.contextAttributes.enumerated() {
            contexts[contextIDs[index], default: []].append((index, CompiledAttribute(context.attribute)))
        }

        names = distinct.map(CompiledName.init)
        self.nameSlots = nameSlots
        var namespaces: [[UInt8]?] = []
        for name in distinct where !namespaces.contains(where: { $0 == name.namespaceURI.map { Array($0.utf8) } }) {
            namespaces.append(name.namespaceURI.map { Array($0.utf8) })
        }
        self.namespaces = namespaces
        fieldInfos = infos
        self.paths = paths
        self.candidates = candidates
        descriptions = slots.map { $0.0.description }
        recordAttributes = schema.recordAttributes.map(CompiledAttribute.init)
        fieldAttributes = slots.map { $0.0.attributes.map(CompiledAttribute.init) }
        contextAttributes = contexts
        recordElementNames = schema.recordElements.map(\.localName)
        aliases = schema.namespaceAliases.map { (Array($0.suffix.utf8), Array($0.namespaceURI.utf8)) }
    }

    /// What a start tag of `name` in namespace `uri` means (cache miss: string comparisons).
    func classify(_ name: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) -> NameSlot {
        if let i = names.firstIndex(where: { $0.matches(name, uri) }) { return nameSlots[i] }
        let foreign = !namespaces.contains { CompiledName.sameNamespace($0, uri) }
        if foreign, let alias = alias(of: uri) {
            if let i = names.firstIndex(where: { equalsCString($0.local, name) && $0.uri == alias }) { return nameSlots[i] }
            return NameSlot()
        }
        var slot = NameSlot()
        slot.foreign = foreign
        return slot
    }

    /// The schema namespace an alias gives a foreign `uri`, if any.
    func alias(of uri: UnsafePointer<xmlChar>?) -> [UInt8]? {
        guard !aliases.isEmpty, let uri else { return nil }
        var length = 0
        while uri[length] != 0 { length += 1 }
        for alias in aliases where alias.suffix.count <= length {
            let tail = UnsafeBufferPointer(start: uri + (length - alias.suffix.count), count: alias.suffix.count)
            if tail.elementsEqual(alias.suffix) { return alias.uri }
        }
        return nil
    }

    /// `uri` as the schema reads it: its alias's namespace when it is foreign and has one.
    func resolvedNamespace(_ uri: String) -> String {
        guard !aliases.isEmpty, !namespaces.contains(where: { $0 == Array(uri.utf8) }) else { return uri }
        let bytes = Array(uri.utf8)
        for alias in aliases where bytes.count >= alias.suffix.count && bytes.suffix(alias.suffix.count).elementsEqual(alias.suffix) {
            return String(decoding: alias.uri, as: UTF8.self)
        }
        return uri
    }
}

func equalsCString(_ bytes: [UInt8], _ c: UnsafePointer<UInt8>) -> Bool {
    var i = 0
    for b in bytes {
        if c[i] != b { return false }   // also stops at the NUL of a shorter C string
        i += 1
    }
    return c[i] == 0
}
