import Foundation
import IncidentXML
import Testing
import TestSupport

/// One bad character never rejects the document: characters XML forbids read as U+FFFD, HTML
/// entities as their characters, each counted for its record and for the document.
@Suite struct RepairTests {
    static let schema = XMLRecordSchema(
        recordElements: [XMLName("r")], fields: [XMLName("a"), XMLName("b")], envelopeFields: [XMLName("h")],
        recordAttributes: [XMLName("id")])
    static let controls: [UInt8] = Array(0x00...0x1F).filter { ![0x09, 0x0A, 0x0D].contains($0) }
    static let fffd = "\u{FFFD}"

    /// A raw control in envelope text, in the record element's attribute, in text and in CDATA.
    @Test(arguments: controls)
    func rawControlCharacter(_ c: UInt8) throws {
        let bytes = Array("<d><h>h".utf8) + [c] + Array("</h><r id=\"i".utf8) + [c] + Array("\"><a>x".utf8) + [c]
            + Array("y</a><b><![CDATA[p".utf8) + [c] + Array("q]]></b></r><r><a>ok</a></r></d>".utf8)
        let result = try readInEveryChunking(bytes, schema: Self.schema)
        #expect(result.records.map(\.values) == [["x\(Self.fffd)y", "p\(Self.fffd)q"], ["ok", nil]])
        #expect(result.records.map(\.attributes) == [["i\(Self.fffd)"], [nil]])
        #expect(result.records.map(\.repairs) == [3, 0])
        #expect(result.finalEnvelope.values == ["h\(Self.fffd)"])
        #expect(result.repairs == 4)
    }

    static let illegalReferences = ["&#1;", "&#x1F;", "&#0;", "&#x0;", "&#x000;", "&#8;", "&#xB;", "&#xD800;", "&#xdfff;",
                                    "&#xFFFE;", "&#65535;", "&#x110000;", "&#1114112;", "&#99999999999999999999;", "&#x00000001;"]

    @Test(arguments: illegalReferences)
    func referenceToAnIllegalCharacter(_ reference: String) throws {
        let xml = "<d><r id=\"a\(reference)b\"><a>x\(reference)y\(reference)</a><b>\(reference)</b></r><r><a>next</a></r></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.schema)
        #expect(result.records.map(\.values) == [["x\(Self.fffd)y\(Self.fffd)", Self.fffd], ["next", nil]])
        #expect(result.records.map(\.attributes) == [["a\(Self.fffd)b"], [nil]])
        #expect(result.records.map(\.repairs) == [4, 0])
        #expect(result.repairs == 4)
    }

    @Test func legalReferencesPassUnchanged() throws {
        let xml = "<d><r id=\"&#x41;&#9;\"><a>x&#9;&#x41;&#65;&#x10FFFF;&#0000000065;&#xE000;&#xFFFD;&#xD7FF;y</a></r></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.schema)
        #expect(result.records.map(\.values) == [["x\tAA\u{10FFFF}A\u{E000}\u{FFFD}\u{D7FF}y", nil]])
        #expect(result.records.map(\.attributes) == [["A\t"]])
        #expect(result.repairs == 0 && result.records[0].repairs == 0)
    }

    /// Inside CDATA, comments and processing instructions references are not references.
    @Test func referencesStayLiteralInCDATACommentsAndProcessingInstructions() throws {
        let xml = "<?pi &#1;?><d><!-- &#1; &nbsp; --><r><a><![CDATA[&#1;&nbsp;&foo;]]></a><?pi &#0;?><b>&amp;#1;</b></r></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.schema)
        #expect(result.records.map(\.values) == [["&#1;&nbsp;&foo;", "&#1;"]])
        #expect(result.repairs == 0)
    }

    /// Every HTML 4 named entity (HTML 4.01 §24, as listed by Python's `html.entities`), in text
    /// and in an attribute; the five XML ones are not repairs.
    @Test func everyHTML4Entity() throws {
        var xml = "<d>"
        for (name, _) in Self.html4 { xml += "<r id=\"[&\(name);]\"><a>[&\(name);]</a></r>" }
        xml += "</d>"
        let result = try read(xml, schema: Self.schema)
        #expect(result.records.count == Self.html4.count)
        var expectedRepairs = 0
        for (record, (name, codePoint)) in zip(result.records, Self.html4) {
            let character = String(UnicodeScalar(codePoint).map(Character.init) ?? "?")
            #expect(record.values == ["[\(character)]", nil], "&\(name);")
            #expect(record.attributes == ["[\(character)]"], "&\(name);")
            let isXML = ["amp", "lt", "gt", "quot"].contains(name)
            #expect(record.repairs == (isXML ? 0 : 2), "&\(name);")
            expectedRepairs += isXML ? 0 : 2
        }
        #expect(result.repairs == expectedRepairs)
    }

    @Test func htmlEntitiesInAnyChunking() throws {
        let xml = "<d><h>&copy;</h><r id=\"&eacute;t&eacute;\"><a>caf&eacute;&nbsp;&hellip; &Eacute;&mdash;&euro;</a></r></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.schema)
        #expect(result.records.map(\.values) == [["café\u{A0}… É—€", nil]])
        #expect(result.records.map(\.attributes) == [["été"]])
        #expect(result.records.map(\.repairs) == [8])
        #expect(result.finalEnvelope.values == ["©"])
        #expect(result.repairs == 9)
    }

    /// An undeclared entity that HTML does not define either (or a differently cased one)
    /// reads as U+FFFD, counted: its name cannot be turned into text.
    @Test func otherUndeclaredEntitiesReadAsReplacement() throws {
        let xml = "<d><r id=\"&foo;\"><a>a&NBSP;b&nbsp2;c&x.y-z;d</a></r><r><a>fine</a></r></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.schema)
        #expect(result.records.map(\.values) == [["a\(Self.fffd)b\(Self.fffd)c\(Self.fffd)d", nil], ["fine", nil]])
        #expect(result.records.map(\.attributes) == [[Self.fffd], [nil]])
        #expect(result.records.map(\.repairs) == [4, 0])
    }

    @Test func aDeclaredEntityWinsOverHTML() throws {
        let xml = "<!DOCTYPE d [<!ENTITY nbsp \"X\"><!ENTITY both \"&eacute;&#1;\">]><d><r id=\"&nbsp;\"><a>&nbsp;|&both;</a></r></d>"
        let result = try read(xml, schema: Self.schema)
        #expect(result.records.map(\.values) == [["X|é\(Self.fffd)", nil]])
        #expect(result.records.map(\.attributes) == [["X"]])
        #expect(result.records.map(\.repairs) == [2])
    }

    /// Repairs in comments, processing instructions or text between records count for the
    /// document only.
    @Test func repairsOutsideRecordValuesCountForTheDocumentOnly() throws {
        let bytes = Array("<?pi a".utf8) + [0x01] + Array("?><d>".utf8) + [0x02] + Array("<r><!--".utf8) + [0x03]
            + Array("--><a>1</a><?x ".utf8) + [0x04] + Array("?></r>&#5;&nbsp;<r><a>&nbsp;</a></r><!--".utf8) + [0x06] + Array("--></d>".utf8)
        let result = try readInEveryChunking(bytes, schema: Self.schema)
        #expect(result.records.map(\.values) == [["1", nil], ["\u{A0}", nil]])
        #expect(result.records.map(\.repairs) == [0, 1])
        #expect(result.repairs == 8)
    }

    /// The real GITS response with an illegal character in one record and an HTML entity in
    /// another reads like its clean self, except those characters; no record is lost.
    @Test func aRepairedRealDocumentKeepsEveryRecord() throws {
        let url = TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")
        let clean = try read(loadBytes(url), schema: Schemas.gits)
        let text = String(decoding: try loadBytes(url), as: UTF8.self)
            .replacingOccurrences(of: "<inciPlace1>강변북로</inciPlace1>", with: "<inciPlace1>강변\u{1}북로&#x1F;</inciPlace1>")
            .replacingOccurrences(of: "<restrictType>갓길</restrictType><inciDesc>", with: "<restrictType>갓&nbsp;길</restrictType><inciDesc>")
        let result = try readInEveryChunking(Array(text.utf8), schema: Schemas.gits, maxSplits: 500)
        #expect(result.records.count == 4)
        #expect(result.records.map(\.repairs) == [0, 2, 1, 0])
        #expect(result.repairs == 3)
        #expect(result.records[1][Schemas.gitsIndex("inciPlace1")] == "강변\(Self.fffd)북로\(Self.fffd)")
        #expect(result.records[2][Schemas.gitsIndex("restrictType")] == "갓\u{A0}길")
        for (repaired, original) in zip(result.records, clean.records) {
            for i in repaired.values.indices where i != Schemas.gitsIndex("inciPlace1") && i != Schemas.gitsIndex("restrictType") {
                #expect(repaired[i] == original[i])
            }
        }
    }

    /// Only a document that cannot be parsed is rejected, with libxml2's position and message.
    @Test func anUnparsableDocumentIsStillRejected() throws {
        var delivered: [XMLRecord] = []
        let reader = XMLRecordReader(schema: Self.schema) { record, _ in delivered.append(record) }
        let error = caught {
            try reader.parse(Array("<d><r><a>&nbsp;\u{1}</a></r>\n<r><a>x</b></r></d>".utf8))
            try reader.finish()
        } as? XMLParseError
        #expect(error?.kind == .malformed)
        #expect(error?.line == 2)
        #expect(error?.message.contains("Opening and ending tag mismatch") == true)
        #expect(delivered.map(\.values) == [["\u{A0}\(Self.fffd)", nil]])
    }

    /// The filter works after conversion to UTF-8, so repairs are the same in every encoding.
    @Test(arguments: ["UTF-16LE", "UTF-16BE", "EUC-KR", "ISO-8859-1"])
    func repairsInOtherEncodings(_ encoding: String) throws {
        let body = "<d><r id=\"&nbsp;\"><a>\u{1}Kä&#1;&eacute;</a></r></d>"
        let bytes: [UInt8]
        switch encoding {
        case "UTF-16LE": bytes = Spelling.utf16(bigEndian: false, body)
        case "UTF-16BE": bytes = Spelling.utf16(bigEndian: true, body)
        default:
            let latin1 = Array("<?xml version=\"1.0\" encoding=\"\(encoding)\"?>".utf8)
                + body.unicodeScalars.map { $0 == "ä" ? (encoding == "EUC-KR" ? 0x41 : 0xE4) : UInt8($0.value) }
            bytes = latin1
        }
        let result = try readInEveryChunking(bytes, schema: Self.schema)
        let k = encoding == "EUC-KR" ? "KA" : "Kä"
        #expect(result.records.map(\.values) == [["\(Self.fffd)\(k)\(Self.fffd)é", nil]])
        #expect(result.records.map(\.attributes) == [["\u{A0}"]])
        #expect(result.records.map(\.repairs) == [4])
    }

    /// U+FFFE and U+FFFF written raw are illegal characters too; a surrogate encoded in UTF-8 is
    /// ill-formed UTF-8 (RFC 3629 §3) and rejects the document like any invalid byte sequence.
    @Test func rawNoncharactersAndEncodedSurrogates() throws {
        let good = Array("<d><r><a>x".utf8) + [0xEF, 0xBF, 0xBE] + Array("y".utf8) + [0xEF, 0xBF, 0xBF] + [0xEF, 0xBC, 0x88]
            + Array("</a></r></d>".utf8)
        let result = try readInEveryChunking(good, schema: Self.schema)
        #expect(result.records.map(\.values) == [["x\(Self.fffd)y\(Self.fffd)（", nil]])
        #expect(result.records.map(\.repairs) == [2])
        let surrogate = Array("<d><r><a>x".utf8) + [0xED, 0xA0, 0x80] + Array("</a></r></d>".utf8)
        let error = try #require(readError(surrogate, schema: Self.schema))
        #expect(error.kind == .encoding)
    }

    /// Many repairs in one large chunk: the rewritten output is handed on in pieces and every
    /// substitution is counted once, in text and in CDATA.
    @Test(arguments: [false, true])
    func manyRepairsInOneLargeChunk(cdata: Bool) throws {
        let count = 100_000
        let controls = [UInt8](repeating: 0x01, count: count)
        let bytes = Array("<d><r><a>\(cdata ? "<![CDATA[" : "")".utf8) + controls
            + Array("\(cdata ? "]]>" : "")</a><b>&nbsp;</b></r></d>".utf8)
        let result = try read(bytes, schema: Self.schema)
        #expect(result.records.map(\.values) == [[String(repeating: Self.fffd, count: count), "\u{A0}"]])
        #expect(result.records.map(\.repairs) == [count + 1])
        #expect(result.repairs == count + 1)
    }

    /// A character reference longer than 32 bytes is left to libxml2 (documented limit).
    @Test func overlongReferenceIsLeftToLibxml2() throws {
        let reference = "&#" + String(repeating: "0", count: 40) + "1;"
        let error = try #require(readError(Array("<d><r><a>\(reference)</a></r></d>".utf8), schema: Self.schema))
        #expect(error.kind == .malformed)
        #expect(error.message.contains("xmlParseCharRef"))
        let legal = "&#" + String(repeating: "0", count: 40) + "65;"
        #expect(try read("<d><r><a>\(legal)</a></r></d>", schema: Self.schema).records.map(\.values) == [["A", nil]])
    }

    /// HTML 4.01 named entities (name, code point), from Python's `html.entities.name2codepoint`.
    static let html4: [(String, UInt32)] = [
        ("AElig", 198), ("Aacute", 193), ("Acirc", 194), ("Agrave", 192), ("Alpha", 913), ("Aring", 197),
        ("Atilde", 195), ("Auml", 196), ("Beta", 914), ("Ccedil", 199), ("Chi", 935), ("Dagger", 8225),
        ("Delta", 916), ("ETH", 208), ("Eacute", 201), ("Ecirc", 202), ("Egrave", 200), ("Epsilon", 917),
        ("Eta", 919), ("Euml", 203), ("Gamma", 915), ("Iacute", 205), ("Icirc", 206), ("Igrave", 204), ("Iota", 921),
        ("Iuml", 207), ("Kappa", 922), ("Lambda", 923), ("Mu", 924), ("Ntilde", 209), ("Nu", 925), ("OElig", 338),
        ("Oacute", 211), ("Ocirc", 212), ("Ograve", 210), ("Omega", 937), ("Omicron", 927), ("Oslash", 216),
        ("Otilde", 213), ("Ouml", 214), ("Phi", 934), ("Pi", 928), ("Prime", 8243), ("Psi", 936), ("Rho", 929),
        ("Scaron", 352), ("Sigma", 931), ("THORN", 222), ("Tau", 932), ("Theta", 920), ("Uacute", 218),
        ("Ucirc", 219), ("Ugrave", 217), ("Upsilon", 933), ("Uuml", 220), ("Xi", 926), ("Yacute", 221),
        ("Yuml", 376), ("Zeta", 918), ("aacute", 225), ("acirc", 226), ("acute", 180), ("aelig", 230),
        ("agrave", 224), ("alefsym", 8501), ("alpha", 945), ("amp", 38), ("and", 8743), ("ang", 8736),
        ("aring", 229), ("asymp", 8776), ("atilde", 227), ("auml", 228), ("bdquo", 8222), ("beta", 946),
        ("brvbar", 166), ("bull", 8226), ("cap", 8745), ("ccedil", 231), ("cedil", 184), ("cent", 162), ("chi", 967),
        ("circ", 710), ("clubs", 9827), ("cong", 8773), ("copy", 169), ("crarr", 8629), ("cup", 8746),
        ("curren", 164), ("dArr", 8659), ("dagger", 8224), ("darr", 8595), ("deg", 176), ("delta", 948),
        ("diams", 9830), ("divide", 247), ("eacute", 233), ("ecirc", 234), ("egrave", 232), ("empty", 8709),
        ("emsp", 8195), ("ensp", 8194), ("epsilon", 949), ("equiv", 8801), ("eta", 951), ("eth", 240), ("euml", 235),
        ("euro", 8364), ("exist", 8707), ("fnof", 402), ("forall", 8704), ("frac12", 189), ("frac14", 188),
        ("frac34", 190), ("frasl", 8260), ("gamma", 947), ("ge", 8805), ("gt", 62), ("hArr", 8660), ("harr", 8596),
        ("hearts", 9829), ("hellip", 8230), ("iacute", 237), ("icirc", 238), ("iexcl", 161), ("igrave", 236),
        ("image", 8465), ("infin", 8734), ("int", 8747), ("iota", 953), ("iquest", 191), ("isin", 8712),
        ("iuml", 239), ("kappa", 954), ("lArr", 8656), ("lambda", 955), ("lang", 9001), ("laquo", 171),
        ("larr", 8592), ("lceil", 8968), ("ldquo", 8220), ("le", 8804), ("lfloor", 8970), ("lowast", 8727),
        ("loz", 9674), ("lrm", 8206), ("lsaquo", 8249), ("lsquo", 8216), ("lt", 60), ("macr", 175), ("mdash", 8212),
        ("micro", 181), ("middot", 183), ("minus", 8722), ("mu", 956), ("nabla", 8711), ("nbsp", 160),
        ("ndash", 8211), ("ne", 8800), ("ni", 8715), ("not", 172), ("notin", 8713), ("nsub", 8836), ("ntilde", 241),
        ("nu", 957), ("oacute", 243), ("ocirc", 244), ("oelig", 339), ("ograve", 242), ("oline", 8254),
        ("omega", 969), ("omicron", 959), ("oplus", 8853), ("or", 8744), ("ordf", 170), ("ordm", 186),
        ("oslash", 248), ("otilde", 245), ("otimes", 8855), ("ouml", 246), ("para", 182), ("part", 8706),
        ("permil", 8240), ("perp", 8869), ("phi", 966), ("pi", 960), ("piv", 982), ("plusmn", 177), ("pound", 163),
        ("prime", 8242), ("prod", 8719), ("prop", 8733), ("psi", 968), ("quot", 34), ("rArr", 8658), ("radic", 8730),
        ("rang", 9002), ("raquo", 187), ("rarr", 8594), ("rceil", 8969), ("rdquo", 8221), ("real", 8476),
        ("reg", 174), ("rfloor", 8971), ("rho", 961), ("rlm", 8207), ("rsaquo", 8250), ("rsquo", 8217),
        ("sbquo", 8218), ("scaron", 353), ("sdot", 8901), ("sect", 167), ("shy", 173), ("sigma", 963),
        ("sigmaf", 962), ("sim", 8764), ("spades", 9824), ("sub", 8834), ("sube", 8838), ("sum", 8721),
        ("sup", 8835), ("sup1", 185), ("sup2", 178), ("sup3", 179), ("supe", 8839), ("szlig", 223), ("tau", 964),
        ("there4", 8756), ("theta", 952), ("thetasym", 977), ("thinsp", 8201), ("thorn", 254), ("tilde", 732),
        ("times", 215), ("trade", 8482), ("uArr", 8657), ("uacute", 250), ("uarr", 8593), ("ucirc", 251),
        ("ugrave", 249), ("uml", 168), ("upsih", 978), ("upsilon", 965), ("uuml", 252), ("weierp", 8472),
        ("xi", 958), ("yacute", 253), ("yen", 165), ("yuml", 255), ("zeta", 950), ("zwj", 8205), ("zwnj", 8204)
    ]
}
