import Foundation
import KVDocs

/// What the app's screens show, all read from one snapshot.
struct Report {
    var total = 0
    var top: [Athlete] = []
    var counts: [(country: String, athletes: Int)] = []
    var byLicence: Athlete?
    var bornAfter = 0
    var youngest: [Athlete] = []
    var group: Group?
    var members: [Athlete] = []
}

enum ReportQueries {
    static let topCountry = "FIN"
    static let countedCountries = ["FIN", "NOR", "SWE", "GER", "JPN"]
    static let licence = "NOR-00023"
    /// 2005-01-01 00:00:00 UTC in Unix seconds: with the store's default date strategy
    /// (`secondsSince1970`), `born` is stored as exactly such a number.
    static let bornAfter = 1_104_537_600
    static let group = "relay"
}

/// Reads every answer of the report inside one `store.read { tx in … }`: typed reads, one
/// snapshot, so the numbers agree with each other even while writes go on.
func readReport(of store: DocumentStore) throws -> Report {
    try store.read { tx in
        var report = Report()
        report.total = try tx.count("athletes")
        // Served by the compound index (country, points): ten index entries read.
        let top = DocumentQuery().where("country", .equal(.string(ReportQueries.topCountry)))
            .orderBy("points", descending: true).limit(10)
        report.top = try tx.fetch(.find("athletes", top, as: Athlete.self))
        for country in ReportQueries.countedCountries {
            report.counts.append(
                (country, try tx.count("athletes", DocumentQuery().where("country", .equal(.string(country))))))
        }
        // The unique index by_licence: one entry.
        report.byLicence = try tx.fetch(
            .find(
                "athletes", DocumentQuery().where("licence", .equal(.string(ReportQueries.licence))).limit(1),
                as: Athlete.self)
        ).first
        // Dates compare as the Unix seconds the store wrote.
        let born = DocumentQuery().where("born", .greater(.int(Int64(ReportQueries.bornAfter))))
        report.bornAfter = try tx.count("athletes", born)
        report.youngest = try tx.fetch(
            .find("athletes", born.orderBy("born", descending: true).limit(3), as: Athlete.self))
        // Typed ids: a String for a group, the Ints of its members.
        report.group = try tx.get("groups", id: ReportQueries.group, as: Group.self)
        for member in report.group?.members ?? [] {
            if let athlete = try tx.get("athletes", id: member, as: Athlete.self) { report.members.append(athlete) }
        }
        return report
    }
}

func printReport(of store: DocumentStore, season: Int) throws {
    let report = try readReport(of: store)
    let day = Date.ISO8601FormatStyle().year().month().day()
    func short(_ a: Athlete) -> String { "#\(a.id) \(a.name) (\(a.points))" }
    print("season \(season): \(report.total) athletes")
    print("top 10 \(ReportQueries.topCountry): " + report.top.map(short).joined(separator: ", "))
    print("athletes per country: " + report.counts.map { "\($0.country) \($0.athletes)" }.joined(separator: ", "))
    if let a = report.byLicence {
        print(
            "licence \(ReportQueries.licence): #\(a.id) \(a.name), \(a.country), \(a.club), \(a.points) points, born \(a.born.formatted(day))"
        )
    } else {
        print("licence \(ReportQueries.licence): not found")
    }
    print(
        "born after \(ReportQueries.bornAfter) (2005-01-01): \(report.bornAfter) athletes; youngest: "
            + report.youngest.map { "#\($0.id) \($0.name) (\($0.born.formatted(day)))" }.joined(separator: ", "))
    if let group = report.group {
        print("group \(group.id) (\(group.name)): " + report.members.map(short).joined(separator: ", "))
    } else {
        print("group \(ReportQueries.group): not found")
    }
}
