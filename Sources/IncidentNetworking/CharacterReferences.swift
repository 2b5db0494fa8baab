/// XML and HTML character references in text (`&#43;`, `&#x2B;`, `&plus;`, `&amp;`), for the
/// redaction of secrets a server echoes escaped: a key with `+` or `/` shown in an HTML error
/// page or an XML body as `abc&#43;def&#x2F;` must be found as the key it is.
enum CharacterReferences {
    /// `text` with its character references decoded, and for each decoded byte the range of
    /// `text` it came from (a reference's bytes for the character it stands for, else the byte
    /// itself); nil when `text` holds no reference. Recognized: decimal `&#NNN;` and hexadecimal
    /// `&#xHH;` references (the `;` may be missing, as HTML parsers accept), the five of XML, and
    /// the HTML names of the other ASCII punctuation (WHATWG HTML, "Named character references").
    static func decoded(_ text: [UInt8]) -> (bytes: [UInt8], spans: [Range<Int>])? {
        guard text.contains(0x26) else { return nil }  // &
        var bytes: [UInt8] = []
        var spans: [Range<Int>] = []
        bytes.reserveCapacity(text.count)
        spans.reserveCapacity(text.count)
        var index = 0
        var found = false
        while index < text.count {
            if text[index] == 0x26, let (scalar, end) = reference(in: text, at: index) {
                for byte in String(scalar).utf8 {
                    bytes.append(byte)
                    spans.append(index..<end)
                }
                index = end
                found = true
            } else {
                bytes.append(text[index])
                spans.append(index..<(index + 1))
                index += 1
            }
        }
        return found ? (bytes, spans) : nil
    }

    /// The character of the reference starting with the `&` at `start`, and the index after it.
    private static func reference(in text: [UInt8], at start: Int) -> (Unicode.Scalar, Int)? {
        var index = start + 1
        guard index < text.count else { return nil }
        if text[index] == 0x23 {  // #
            index += 1
            let hex = index < text.count && (text[index] | 0x20) == 0x78  // x or X
            if hex { index += 1 }
            let digitsStart = index
            var value: UInt32 = 0
            while index < text.count, index - digitsStart < 8, let digit = digit(text[index], hex: hex) {
                value = value * (hex ? 16 : 10) + digit
                index += 1
            }
            guard index > digitsStart, let scalar = Unicode.Scalar(value) else { return nil }
            if index < text.count && text[index] == 0x3B { index += 1 }  // ;
            return (scalar, index)
        }
        let nameStart = index
        while index < text.count, index - nameStart < 32, isASCIILetter(text[index]) { index += 1 }
        guard index > nameStart, index < text.count, text[index] == 0x3B,
              let scalar = named[String(decoding: text[nameStart..<index], as: UTF8.self)] else { return nil }
        return (scalar, index + 1)
    }

    private static func digit(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46 where hex: UInt32(byte - 0x41 + 10)
        case 0x61...0x66 where hex: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// XML's five predefined entities and HTML's names for the other ASCII punctuation.
    static let named: [String: Unicode.Scalar] = [
        "amp": "&", "AMP": "&", "lt": "<", "LT": "<", "gt": ">", "GT": ">", "quot": "\"", "QUOT": "\"", "apos": "'",
        "excl": "!", "num": "#", "dollar": "$", "percnt": "%", "lpar": "(", "rpar": ")", "ast": "*", "midast": "*",
        "plus": "+", "comma": ",", "period": ".", "sol": "/", "colon": ":", "semi": ";", "equals": "=", "quest": "?",
        "commat": "@", "lsqb": "[", "lbrack": "[", "bsol": "\\", "rsqb": "]", "rbrack": "]", "Hat": "^", "lowbar": "_",
        "UnderBar": "_", "grave": "`", "DiacriticalGrave": "`", "lcub": "{", "lbrace": "{", "verbar": "|", "vert": "|",
        "VerticalLine": "|", "rcub": "}", "rbrace": "}", "Tab": "\t", "NewLine": "\n", "nbsp": "\u{A0}",
    ]
}
