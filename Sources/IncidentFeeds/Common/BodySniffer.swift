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
    case other
}

enum BodySniffer {
    /// Sniffs the first significant bytes (after a UTF-8 BOM and whitespace) of `file`.
    static func sniff(_ file: URL) throws -> (kind: BodyKind, head: [UInt8]) {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw FeedError(.unreadableFile, provider: "-", message: "cannot read \(file.path)")
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 1024)) ?? Data())
        return (kind(of: head), head)
    }

    static func kind(of head: [UInt8]) -> BodyKind {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
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

    /// A log-safe excerpt of a body's first bytes: at most 160 characters, control characters
    /// shown as spaces, keys redacted. The whole head (1 KiB) is redacted *before* it is cut, so
    /// a key that straddles the cut is still recognised whole and never leaks in part.
    static func excerpt(_ head: [UInt8]) -> String {
        let redacted = Redaction.redact(String(decoding: head, as: UTF8.self))
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
        case .other: "a body of another kind"
        }
        guard let contentType else {
            // A file given to `ingest --file`.
            return FeedError(.unexpectedResponse, provider: provider,
                             message: "the file is not \(expected): it is \(what), starting '\(excerpt(head))'")
        }
        return FeedError(.unexpectedResponse, provider: provider,
                         message: "expected \(expected) but got \(what) (Content-Type: \(contentType)): '\(excerpt(head))'; "
                            + "the API or a proxy in front of it is failing: check the base URL and try again later")
    }
}
