import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// kvrepl's `import`: every line is checked, against every index too, before any is written.
@Suite struct KVReplImportTests {
    /// 1,000 good stations followed by one whose location is no point (a latitude given as
    /// a string): the import names the line and writes none of the 1,000.
    @Test func anInvalidGeoPointAfterAThousandGoodLinesImportsNothing() throws {
        let dir = TemporaryDirectory("kvrepl-import")
        let db = dir.child("db"), file = dir.child("stations.jsonl")
        var r = try kvrepl(["--demo", db, "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
        let good = (0..<1000).map {
            #"{"id": "S\#($0)", "name": "Stop \#($0)", "zone": 1, "lines": [], "location": {"lat": -31.9, "lon": 115.8}}"#
        }
        let bad = #"{"id": "S1000", "name": "Nowhere", "zone": 1, "lines": [], "location": {"lat": "10", "lon": 0}}"#
        try (good + [bad]).joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        r = try kvrepl([db, "-c", "import stations \(file)"])
        #expect(r.status == 1)
        #expect(r.stdout == "")
        #expect(
            r.stderr.contains(
                "\(file):1001: geo index by_location of collection \"stations\": field location of document \"S1000\" holds {\"lat\":\"10\",\"lon\":0}, which is not a point"
            ), "\(r.stderr)")
        #expect(r.stderr.contains("nothing was imported"), "\(r.stderr)")
        r = try kvrepl([db, "-c", "count stations", "-c", "doc stations \"S0\""])
        #expect(r.stdout == "60\n", "\(r.stdout)")
        #expect(r.stderr.contains("has no document"), "\(r.stderr)")
        r = try kvrepl([db, "--json", "-c", "verify"])
        #expect(r.status == 0, "\(r.stderr)")
    }
}
