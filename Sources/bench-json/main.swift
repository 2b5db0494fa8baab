// bench-json: reads one WZDx-style FeatureCollection with JSONRecordReader and prints what it
// found, for Scripts/bench-json (which times it and measures its peak RSS).
//   usage: bench-json FILE
import IncidentJSON
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: bench-json FILE")
    exit(64)
}
let schema = JSONRecordSchema(recordPaths: [["features", "*"]], envelopePaths: [["feed_info", "publisher"]])
var withID = 0
let reader = JSONRecordReader(schema: schema) { record, _ in
    if record.value["id"]?.string != nil { withID += 1 }
}
do {
    let summary = try reader.parse(contentsOf: URL(fileURLWithPath: arguments[1]))
    print("records \(summary.recordCount) with_id \(withID) bytes \(summary.byteCount) publisher \(summary.envelope[0]?.scalarText ?? "-")")
} catch {
    print("bench-json: \(error)")
    exit(1)
}
