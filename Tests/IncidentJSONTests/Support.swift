import Foundation
import IncidentJSON
import Testing
import TestSupport

/// Everything one read produced.
struct ReadResult: Equatable {
    var records: [JSONRecord]
    /// The envelope handed over with each record.
    var envelopes: [JSONEnvelope]
    var summary: JSONDocumentSummary
}

/// Reads `bytes` in chunks of `chunkSize` (all at once when nil) and finishes.
func read(_ bytes: [UInt8], schema: JSONRecordSchema, limits: JSONLimits = .default, chunkSize: Int? = nil) throws -> ReadResult {
    var records: [JSONRecord] = []
    var envelopes: [JSONEnvelope] = []
    let reader = JSONRecordReader(schema: schema, limits: limits) { record, envelope in
        records.append(record)
        envelopes.append(envelope)
    }
    let size = max(1, chunkSize ?? bytes.count)
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + size)
        try reader.parse(Array(bytes[start..<end]))
        start = end
    }
    let summary = try reader.finish()
    return ReadResult(records: records, envelopes: envelopes, summary: summary)
}

func read(_ text: String, schema: JSONRecordSchema, limits: JSONLimits = .default, chunkSize: Int? = nil) throws -> ReadResult {
    try read(Array(text.utf8), schema: schema, limits: limits, chunkSize: chunkSize)
}

/// The error a read throws; fails the test when it does not throw a `JSONParseError`.
func readError(_ bytes: [UInt8], schema: JSONRecordSchema, limits: JSONLimits = .default, chunkSize: Int? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    do {
        _ = try read(bytes, schema: schema, limits: limits, chunkSize: chunkSize)
        Issue.record("expected a JSONParseError, the read succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as JSONParseError {
        return error
    } catch {
        Issue.record("expected a JSONParseError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

func readError(_ text: String, schema: JSONRecordSchema, limits: JSONLimits = .default, chunkSize: Int? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    readError(Array(text.utf8), schema: schema, limits: limits, chunkSize: chunkSize, sourceLocation: sourceLocation)
}

func loadFeed(_ relativePath: String) throws -> [UInt8] {
    try [UInt8](Data(contentsOf: TestPaths.sharedFeed(relativePath)))
}

/// A root array's elements: the simplest schema.
let rootArray = JSONRecordSchema(recordPaths: [["*"]])

/// Peak resident set size of this process so far, in bytes (Linux `VmHWM`), or nil.
func peakRSS() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
    }
    return nil
}

/// A read's result or its error, comparable.
enum Outcome: Equatable, CustomStringConvertible {
    case read(ReadResult)
    case failed(JSONParseError)

    init(_ bytes: [UInt8], schema: JSONRecordSchema, limits: JSONLimits = .default, chunks: [Int]) {
        do {
            var records: [JSONRecord] = []
            var envelopes: [JSONEnvelope] = []
            let reader = JSONRecordReader(schema: schema, limits: limits) { record, envelope in
                records.append(record)
                envelopes.append(envelope)
            }
            var start = 0
            for size in chunks where start < bytes.count {
                let end = min(bytes.count, start + size)
                try reader.parse(Array(bytes[start..<end]))
                start = end
            }
            if start < bytes.count { try reader.parse(Array(bytes[start...])) }
            let summary = try reader.finish()  // before `records` is read: finish may deliver the last record
            self = .read(ReadResult(records: records, envelopes: envelopes, summary: summary))
        } catch let error as JSONParseError {
            self = .failed(error)
        } catch {
            self = .failed(JSONParseError(kind: .io, message: "unexpected \(error)"))
        }
    }

    var description: String {
        switch self {
        case .read(let result): return "records \(result.records.map(\.value.description)) summary \(result.summary)"
        case .failed(let error): return "\(error)"
        }
    }
}
