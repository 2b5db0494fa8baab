import Foundation
import IncidentNetworking

/// What a response body is, judged from its first bytes rather than from what was asked for:
/// Korean gateways answer XML when JSON was requested, and proxies answer HTML error pages
/// with HTTP 200.
enum BodyKind: Equatable, Sendable {
    case xml
    case json
    case html
    case empty
    /// A gzip member (RFC 1952 magic bytes `1F 8B`): compressed, whatever it holds.
    case gzip
    case other
}

enum BodySniffer {
    /// Sniffs the first significant bytes (after a UTF-8 BOM and whitespace) of `file`.
    /// (Read through ``BodyFile``: a body still downloading is waited for up to 1 KiB.)
    static func sniff(_ file: URL) throws -> (kind: BodyKind, head: [UInt8]) {
        let head = try BodyFile.head(file, provider: "-")
        return (kind(of: head), head)
    }

    /// The kind of a body from its first bytes: after a byte order mark (UTF-8, UTF-16 or
    /// UTF-32, whose text is read in that encoding) and whitespace, `{`/`[` is JSON, `<` XML
    /// (or HTML). UTF-16 and UTF-32 without a mark are recognised by `<` followed by zero bytes
    /// (XML 1.0 Appendix F).
    static func kind(of head: [UInt8]) -> BodyKind {
        if Gzip.isGzip(head) { return .gzip }
        var bytes = ArraySlice(asciiView(of: head))
        bytes = bytes.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = bytes.first else { return .empty }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return .json
        case UInt8(ascii: "<"):
            let lower = String(decoding: bytes.prefix(64), as: UTF8.self).lowercased()
            if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") { return .html }
            return .xml
        default:
            return .other
        }
    }

    /// The first bytes as 8-bit text: a UTF-8 mark removed; UTF-16/32 (by mark, or by `<` and
    /// zero bytes) narrowed to their low bytes, enough to see `<`, `{` or `<html`.
    static func asciiView(of head: [UInt8]) -> [UInt8] {
        func narrow(_ bytes: ArraySlice<UInt8>, width: Int, lowFirst: Bool) -> [UInt8] {
            stride(from: bytes.startIndex, to: bytes.endIndex - (width - 1), by: width).map { bytes[lowFirst ? $0 : $0 + width - 1] }
        }
        let b = head[...]
        switch true {
        case b.starts(with: [0xEF, 0xBB, 0xBF]): return Array(b.dropFirst(3))
        case b.starts(with: [0xFF, 0xFE, 0x00, 0x00]): return narrow(b.dropFirst(4), width: 4, lowFirst: true)
        case b.starts(with: [0x00, 0x00, 0xFE, 0xFF]): return narrow(b.dropFirst(4), width: 4, lowFirst: false)
        case b.starts(with: [0xFF, 0xFE]): return narrow(b.dropFirst(2), width: 2, lowFirst: true)
        case b.starts(with: [0xFE, 0xFF]): return narrow(b.dropFirst(2), width: 2, lowFirst: false)
        case b.starts(with: [0x3C, 0x00, 0x00, 0x00]): return narrow(b, width: 4, lowFirst: true)
        case b.starts(with: [0x00, 0x00, 0x00, 0x3C]): return narrow(b, width: 4, lowFirst: false)
        case b.starts(with: [0x3C, 0x00]): return narrow(b, width: 2, lowFirst: true)
        case b.starts(with: [0x00, 0x3C]): return narrow(b, width: 2, lowFirst: false)
        default: return head
        }
    }

    /// A log-safe excerpt of a body's first bytes: at most 160 characters, control characters
    /// shown as spaces, keys redacted. The whole head (1 KiB) is redacted *before* it is cut, so
    /// a key that straddles the cut is still recognised whole and never leaks in part.
    static func excerpt(_ head: [UInt8]) -> String {
        let redacted = Redaction.redact(String(decoding: asciiView(of: head), as: UTF8.self))
        return String(redacted.unicodeScalars.prefix(160).map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }

    /// The error for a body that is not the format a provider sends.
    static func unexpected(_ kind: BodyKind, head: [UInt8], contentType: String?, provider: String,
                           expected: String) -> FeedError {
        let what = switch kind {
        case .empty: "an empty body"
        case .html: "an HTML page"
        case .json: "a JSON document"
        case .xml: "an XML document"
        case .gzip: "a gzip-compressed body"
        case .other: "a body of another kind"
        }
        // Compressed bytes say nothing to a reader and could hold anything: never quoted.
        let quoted = kind == .gzip ? "" : ", starting '\(excerpt(head))'"
        let quotedHere = kind == .gzip ? "" : ": '\(excerpt(head))'"
        guard let contentType else {
            // A file given to `ingest --file`.
            return FeedError(.unexpectedResponse, provider: provider,
                             message: "the file is not \(expected): it is \(what)\(quoted)")
        }
        return FeedError(.unexpectedResponse, provider: provider,
                         message: "expected \(expected) but got \(what) (Content-Type: \(contentType))\(quotedHere); "
                            + "the API or a proxy in front of it is failing: check the base URL and try again later")
    }
}
