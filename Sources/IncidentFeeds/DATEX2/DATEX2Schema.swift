import IncidentXML

/// The XML namespaces of DATEX II, by URI (the prefixes a document uses never matter).
///
/// Sources: the `targetNamespace` of the DATEX II 2.2.3 schema (`DATEXIISchema_2_2_3.xsd`) and
/// of the DATEX II 3.1 schemas `DATEXII_3_Situation.xsd`, `_Common.xsd`,
/// `_LocationReferencing.xsd`, `_D2Payload.xsd`, `_MessageContainer.xsd` and
/// `_ExchangeInformation.xsd` (as published in svvsaga/gradle-modules-public,
/// `modules/datex-schemas/src/main/resources`, commit 9ccca6d); SOAP 1.1 and 1.2 envelopes
/// (W3C Note "SOAP 1.1" §4, W3C Recommendation "SOAP Version 1.2 Part 1" §5).
public enum DATEX2Namespace {
    /// Every element of DATEX II 2.0–2.3 (`d2LogicalModel`, `situationRecord`, …).
    public static let v2 = "http://datex2.eu/schema/2/2_0"
    /// DATEX II 3: situations and situation records (`sit:`).
    public static let situation = "http://datex2.eu/schema/3/situation"
    /// DATEX II 3: shared types such as validity and multilingual text (`com:`).
    public static let common = "http://datex2.eu/schema/3/common"
    /// DATEX II 3: location referencing (`loc:`).
    public static let locationReferencing = "http://datex2.eu/schema/3/locationReferencing"
    /// DATEX II 3: the `d2:payload` root element.
    public static let d2Payload = "http://datex2.eu/schema/3/d2Payload"
    /// DATEX II 3 exchange (2018/2020): `mc:messageContainer` and its `mc:payload`.
    public static let messageContainer = "http://datex2.eu/schema/3/messageContainer"
    /// DATEX II 3 exchange information (`ex:codedExchangeProtocol`, …).
    public static let exchangeInformation = "http://datex2.eu/schema/3/exchangeInformation"
    static let soap11 = "http://schemas.xmlsoap.org/soap/envelope/"
    static let soap12 = "http://www.w3.org/2003/05/soap-envelope"
}

/// What the DATEX II reader extracts: one ``XMLRecordSchema`` that reads DATEX II 2 and 3 at
/// once, with `situationRecord` of either version as the record element; the version of a
/// record is the namespace of its element (``XMLRecord/recordElementIndex`` 0: 2, 1: 3).
///
/// Every value is chosen by its element's path and namespace, as the schemas define it
/// (``Field`` lists the paths); the same values of both versions are read into the same
/// ``DATEX2Record`` fields.
enum DATEX2Schema {
    /// The values read from each record, whatever the version.
    enum Field: CaseIterable {
        // SituationRecord (2.2.3 and 3.1: same names, same order)
        case creationTime, versionTime, probabilityOfOccurrence, severity
        // Validity (2.x in the record's namespace; 3.x sit:validity holding com: elements)
        case validityStatus, overallStartTime, overallEndTime
        // Management/LifeCycleManagement: 2.x only
        case lifeCycleEnd, lifeCycleCancel
        // Cause: 2.x NonManagedCause/causeType, 3.x Cause/causeType
        case causeType
        // The detail types the category table uses, as children of the record itself
        case vehicleObstructionType, generalNetworkManagementType, roadOrCarriagewayOrLaneManagementType
        // generalPublicComment/comment/values/value[@lang]
        case comment, commentValue
        // Locations: the record's location (2.x groupOfLocations, 3.x locationReference) and
        // the members of location groups and itineraries, each with its xsi:type
        case location, groupMember, itineraryMember
        case pointLatitude, pointLongitude, displayLatitude, displayLongitude
        case tpegPointLatitude, tpegPointLongitude, fromLatitude, fromLongitude, toLatitude, toLongitude
        case lineString, posList
        case roadNameValue, roadInformationName, roadNumber
        case alertCCountry, alertCTable, alertCTableVersion, alertCDirection, alertCLocation, tpegDirection
        case externalCode, externalSystem
    }

    enum Version: Int, CaseIterable {
        case v2 = 0, v3 = 1
    }

    static let lang = XMLAttribute(XMLName("lang"))

    /// The path of `field` in `version`, nil when that version has no such element.
    static func path(_ field: Field, _ version: Version) -> [XMLName]? {
        // Names in the record's namespace (2.x: everything; 3.x: sit:), in com: and in loc:.
        let v2 = version == .v2
        func r(_ local: String) -> XMLName { XMLName(local, namespaceURI: v2 ? DATEX2Namespace.v2 : DATEX2Namespace.situation) }
        func c(_ local: String) -> XMLName { XMLName(local, namespaceURI: v2 ? DATEX2Namespace.v2 : DATEX2Namespace.common) }
        func l(_ local: String) -> XMLName { XMLName(local, namespaceURI: v2 ? DATEX2Namespace.v2 : DATEX2Namespace.locationReferencing) }
        switch field {
        case .creationTime: return [r("situationRecordCreationTime")]
        case .versionTime: return [r("situationRecordVersionTime")]
        case .probabilityOfOccurrence: return [r("situationRecord"), r("probabilityOfOccurrence")]
        case .severity: return [r("situationRecord"), r("severity")]
        case .validityStatus: return [r("validity"), c("validityStatus")]
        case .overallStartTime: return [c("validityTimeSpecification"), c("overallStartTime")]
        case .overallEndTime: return [c("validityTimeSpecification"), c("overallEndTime")]
        case .lifeCycleEnd: return v2 ? [r("lifeCycleManagement"), r("end")] : nil
        case .lifeCycleCancel: return v2 ? [r("lifeCycleManagement"), r("cancel")] : nil
        case .causeType: return [r("cause"), r("causeType")]
        case .vehicleObstructionType: return [r("situationRecord"), r("vehicleObstructionType")]
        case .generalNetworkManagementType: return [r("situationRecord"), r("generalNetworkManagementType")]
        case .roadOrCarriagewayOrLaneManagementType: return [r("situationRecord"), r("roadOrCarriagewayOrLaneManagementType")]
        case .comment: return [r("generalPublicComment")]
        case .commentValue: return [r("generalPublicComment"), r("comment"), c("values"), c("value")]
        case .location: return [r("situationRecord"), v2 ? r("groupOfLocations") : r("locationReference")]
        case .groupMember: return [l("locationContainedInGroup")]
        case .itineraryMember: return [l("locationContainedInItinerary"), l("location")]
        case .pointLatitude: return [l("pointByCoordinates"), l("pointCoordinates"), l("latitude")]
        case .pointLongitude: return [l("pointByCoordinates"), l("pointCoordinates"), l("longitude")]
        case .displayLatitude: return [v2 ? l("locationForDisplay") : l("coordinatesForDisplay"), l("latitude")]
        case .displayLongitude: return [v2 ? l("locationForDisplay") : l("coordinatesForDisplay"), l("longitude")]
        case .tpegPointLatitude: return [l("point"), l("pointCoordinates"), l("latitude")]
        case .tpegPointLongitude: return [l("point"), l("pointCoordinates"), l("longitude")]
        case .fromLatitude: return [l("from"), l("pointCoordinates"), l("latitude")]
        case .fromLongitude: return [l("from"), l("pointCoordinates"), l("longitude")]
        case .toLatitude: return [l("to"), l("pointCoordinates"), l("latitude")]
        case .toLongitude: return [l("to"), l("pointCoordinates"), l("longitude")]
        case .lineString: return v2 ? nil : [l("gmlLineString")]
        case .posList: return v2 ? nil : [l("gmlLineString"), l("posList")]
        case .roadNameValue: return [l("linearElement"), l("roadName"), c("values"), c("value")]
        case .roadInformationName: return v2 ? nil : [l("roadInformation"), l("roadName")]
        case .roadNumber: return [l("roadNumber")]
        case .alertCCountry: return [l("alertCLocationCountryCode")]
        case .alertCTable: return [l("alertCLocationTableNumber")]
        case .alertCTableVersion: return [l("alertCLocationTableVersion")]
        case .alertCDirection: return [l("alertCDirection"), l("alertCDirectionCoded")]
        case .alertCLocation: return [l("alertCLocation"), l("specificLocation")]
        case .tpegDirection: return [l("tpegDirection")]
        case .externalCode: return [l("externalReferencing"), l("externalLocationCode")]
        case .externalSystem: return [l("externalReferencing"), l("externalReferencingSystem")]
        }
    }

    /// The single fields (at most once per record in the schemas; a second occurrence is a
    /// problem of the record). Everything about locations and comments repeats: a record's
    /// location may be a group of locations, and it may carry several comments.
    static let singleFields: Set<Field> = [
        .creationTime, .versionTime, .probabilityOfOccurrence, .severity, .validityStatus,
        .overallStartTime, .overallEndTime, .lifeCycleEnd, .lifeCycleCancel, .causeType, .location,
    ]

    static func xmlField(_ field: Field, path: [XMLName]) -> XMLField {
        let cardinality: XMLField.Cardinality = singleFields.contains(field) ? .single : .repeated
        switch field {
        case .location, .groupMember, .itineraryMember:
            return XMLField(path, cardinality: cardinality, attributes: [.xsiType], capturesText: false)
        case .comment:
            return XMLField(path, cardinality: cardinality, capturesText: false)
        case .commentValue, .roadNameValue:
            return XMLField(path, cardinality: cardinality, attributes: [lang])
        case .lineString:
            return XMLField(path, cardinality: cardinality,
                            attributes: [XMLAttribute(XMLName("srsName")), XMLAttribute(XMLName("srsDimension"))],
                            capturesText: false)
        default:
            return XMLField(path, cardinality: cardinality)
        }
    }

    /// Every (version, field) that has a path, in schema order.
    static let slots: [(version: Version, field: Field)] = Version.allCases.flatMap { version in
        Field.allCases.compactMap { path($0, version) == nil ? nil : (version, $0) }
    }

    /// For each schema field index, what it reads.
    static let fieldOfIndex: [Field] = slots.map(\.field)

    /// The schema index of each field per version (nil when the version lacks it).
    static let indexOf: [[Field: Int]] = Version.allCases.map { version in
        var table: [Field: Int] = [:]
        for (index, slot) in slots.enumerated() where slot.version == version { table[slot.field] = index }
        return table
    }

    /// Values read outside the records; indexes into `envelopeFields`.
    enum Envelope: Int, CaseIterable {
        /// 2.x `d2LogicalModel/payloadPublication` (@xsi:type, @lang).
        case v2Payload
        /// 3.x root `d2:payload` (@xsi:type, @lang).
        case d2Payload
        /// 3.x `mc:payload` in a `mc:messageContainer` or a stateful-push `putDataInput`.
        case containerPayload
        case v2PublicationTime, v3PublicationTime
        /// 2.x `exchange/subscription/updateMethod` (snapshot, allElementUpdate, singleElementUpdate).
        case updateMethod
        /// 2.x `exchange/denyReason`, sent instead of a payload.
        case denyReason
        /// 3.x `ex:exchangeContext/ex:codedExchangeProtocol` (snapshotPull, snapshotPush,
        /// simplePush, statefulPush).
        case exchangeProtocol
        case soap11FaultCode, soap11FaultString, soap12FaultCode, soap12FaultReason
    }

    static let envelopeFields: [XMLField] = Envelope.allCases.map { envelope in
        let d2 = DATEX2Namespace.v2
        let kindAndLanguage = [XMLAttribute.xsiType, lang]
        switch envelope {
        case .v2Payload:
            return XMLField(XMLName("payloadPublication", namespaceURI: d2), attributes: kindAndLanguage, capturesText: false)
        case .d2Payload:
            return XMLField(XMLName("payload", namespaceURI: DATEX2Namespace.d2Payload), attributes: kindAndLanguage, capturesText: false)
        case .containerPayload:
            return XMLField(XMLName("payload", namespaceURI: DATEX2Namespace.messageContainer), attributes: kindAndLanguage, capturesText: false)
        case .v2PublicationTime:
            return XMLField([XMLName("payloadPublication", namespaceURI: d2), XMLName("publicationTime", namespaceURI: d2)])
        case .v3PublicationTime:
            return XMLField(XMLName("publicationTime", namespaceURI: DATEX2Namespace.common))
        case .updateMethod:
            return XMLField([XMLName("subscription", namespaceURI: d2), XMLName("updateMethod", namespaceURI: d2)])
        case .denyReason:
            return XMLField([XMLName("exchange", namespaceURI: d2), XMLName("denyReason", namespaceURI: d2)])
        case .exchangeProtocol:
            let ex = DATEX2Namespace.exchangeInformation
            return XMLField([XMLName("exchangeContext", namespaceURI: ex), XMLName("codedExchangeProtocol", namespaceURI: ex)])
        case .soap11FaultCode:
            return XMLField([XMLName("Fault", namespaceURI: DATEX2Namespace.soap11), XMLName("faultcode")])
        case .soap11FaultString:
            return XMLField([XMLName("Fault", namespaceURI: DATEX2Namespace.soap11), XMLName("faultstring")])
        case .soap12FaultCode:
            let soap = DATEX2Namespace.soap12
            return XMLField([XMLName("Fault", namespaceURI: soap), XMLName("Code", namespaceURI: soap), XMLName("Value", namespaceURI: soap)])
        case .soap12FaultReason:
            let soap = DATEX2Namespace.soap12
            return XMLField([XMLName("Fault", namespaceURI: soap), XMLName("Reason", namespaceURI: soap), XMLName("Text", namespaceURI: soap)])
        }
    }

    /// Record attributes: `id`, `version`, `xsi:type` (the record's kind).
    static let recordAttributes = [XMLAttribute(XMLName("id")), XMLAttribute(XMLName("version")), XMLAttribute.xsiType]

    /// Context attributes: 2.x `situation/@id`, `situation/@version`; 3.x `sit:situation/@id`
    /// (3.x situations have no version).
    static let contextAttributes = [
        XMLContextAttribute(element: XMLName("situation", namespaceURI: DATEX2Namespace.v2), attribute: XMLAttribute(XMLName("id"))),
        XMLContextAttribute(element: XMLName("situation", namespaceURI: DATEX2Namespace.v2), attribute: XMLAttribute(XMLName("version"))),
        XMLContextAttribute(element: XMLName("situation", namespaceURI: DATEX2Namespace.situation), attribute: XMLAttribute(XMLName("id"))),
    ]

    static let schema: XMLRecordSchema = {
        var schema = XMLRecordSchema(
            recordElements: [XMLName("situationRecord", namespaceURI: DATEX2Namespace.v2),
                             XMLName("situationRecord", namespaceURI: DATEX2Namespace.situation)],
            fields: slots.compactMap { slot in path(slot.field, slot.version).map { xmlField(slot.field, path: $0) } },
            envelopeFields: envelopeFields,
            recordAttributes: recordAttributes,
            contextAttributes: contextAttributes)
        schema.namespaceAliases = namespaceAliases
        return schema
    }()

    /// DATEX II 3 under other namespace URIs: a URI ending in `/schema/3/<module>` for one of
    /// the DATEX II 3 modules read here is read as that module's `http://datex2.eu/schema/3/…`.
    /// Spain's DGT (DATEX II 3.6) binds its prefixes to `http://levelC/schema/3/d2Payload`,
    /// `…/situation`, `…/common` and `…/locationReferencing`: the same elements and types under
    /// the URIs of its profile. The structure still decides: a document is read only when it has
    /// a payload of `xsi:type` SituationPublication.
    static let namespaceAliases: [XMLNamespaceAlias] = [
        DATEX2Namespace.d2Payload, DATEX2Namespace.situation, DATEX2Namespace.common,
        DATEX2Namespace.locationReferencing, DATEX2Namespace.messageContainer, DATEX2Namespace.exchangeInformation,
    ].map { uri in
        XMLNamespaceAlias(suffix: "/schema/3/" + (uri.split(separator: "/").last.map(String.init) ?? uri), namespaceURI: uri)
    }
}
