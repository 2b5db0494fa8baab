import Foundation
import IncidentNetworking

/// What a response body is, judged from its first bytes rather than from what was asked for:
/// Korean gateways answer XML when JSON was requested, and proxies answer HTML error pages
/// with HTTP 200.
public enum BodyKind: Equatable, Sendable {
    case xml
    case json
    case html
    case empty
    case other
}

public enum BodySniffer {
    /// Sniffs the first significant bytes (after a UTF-8 BOM and whitespace) of `file`.
    public static func sniff(_ file: URL) throws -> (kind: BodyKind, head: [UInt8]) {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw FeedError(.unreadableFile, provider: "-", message: "cannot read \(file.path)")
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 1024)) ?? Data())
        return (kind(of: head), head)
    }

    public static func kind(of head: [UInt8]) -> BodyKind {
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
    /// shown as spaces, keys redacted.
    public static func excerpt(_ head: [UInt8]) -> String {
        let text = String(decoding: head.prefix(480), as: UTF8.self)
        let cleaned = String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) }.prefix(160))
        return Redaction.redact(cleaned)
    }

    /// The error for a body that is not the format a provider sends.
    static func unexpected(_ kind: BodyKind, head: [UInt8], contentType: String?, provider: String,
                           expected: String) -> FeedError {
        let what = kind == .empty ? "an empty body" : "\(kind == .html ? "an HTML page" : "a \(kind) body")"
        return FeedError(.unexpectedResponse, provider: provider,
                         message: "expected \(expected) but got \(what) (Content-Type: \(contentType ?? "none")): '\(excerpt(head))'; "
                            + "the API or a proxy in front of it is failing: check the base URL and try again later")
    }
}
