import IncidentJSON
import Testing

@Suite struct SmokeTests {
    @Test func basic() throws {
        let r = try read(#"{"a":[1,{"b":"x\ty","b":null}],"c":true}"#, schema: JSONRecordSchema(recordPaths: [["a", "*"]], envelopePaths: [["c"]]))
        print(r)
    }
}
