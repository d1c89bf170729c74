import Foundation
import KVDocs

/// The "downloaded" data: a season's athletes, generated deterministically, so that every
/// run (and the tests) sees the same answers. An athlete's identity (name, country, club,
/// licence, birth date) depends on its id only; its points depend on the season too.
enum Season {
    static let countries = ["NOR", "SWE", "FIN", "GER", "AUT", "ITA", "FRA", "SUI", "USA", "CAN", "JPN", "SLO"]
    /// Relative sizes of the countries' teams, in the order of `countries`.
    static let weights = [9, 7, 6, 6, 5, 4, 4, 3, 3, 3, 2, 2]
    static let clubs = [
        "NOR": ["Tromsø SK", "Lillehammer IF", "Bærum SK", "Trondhjems SK"],
        "SWE": ["IFK Mora", "Östersunds SK", "Falun-Borlänge SK"],
        "FIN": ["Lahden Hiihtoseura", "Vuokatti Ski Team", "Oulun Hiihtoseura"],
        "GER": ["SC Oberstdorf", "WSV Oberhof", "SC Willingen"],
        "AUT": ["SC Bischofshofen", "SV Innsbruck-Bergisel"],
        "ITA": ["GS Fiamme Gialle", "US Dolomitica"],
        "FRA": ["SC Les Rousses", "CS La Clusaz"],
        "SUI": ["SC Davos", "SC Einsiedeln"],
        "USA": ["Park City Nordic", "Steamboat SWSC"],
        "CAN": ["Canmore Nordic", "Nakkertok Nordic"],
        "JPN": ["Sapporo Ski Club", "Nagano Ski Club"],
        "SLO": ["SK Triglav Kranj", "SSK Ilirija"]
    ]
    static let firstNames = [
        "Ada", "Bo", "Clara", "Dag", "Elin", "Finn", "Greta", "Hugo", "Ingrid", "Jonas",
        "Karin", "Lars", "Maja", "Nils", "Oda", "Per", "Rut", "Sander", "Tuva", "Ulf"
    ]
    static let lastNames = [
        "Berg", "Dahl", "Eriksen", "Fjeld", "Haugen", "Johansen", "Lie", "Moen", "Nilsen",
        "Olsen", "Rønning", "Solberg", "Strand", "Vik", "Ødegård", "Åsen"
    ]
    /// Points range from 0 to 4,999.
    static let maximumPoints = 4_999

    /// The athletes of `year`: ids 1 through `count`.
    static func athletes(year: Int, count: Int) -> [Athlete] {
        (1...count).map { athlete(id: $0, year: year) }
    }

    /// Athlete `id` in `year`.
    static func athlete(id: Int, year: Int) -> Athlete {
        var identity = SplitMix64(seed: UInt64(id))
        var pick = identity.below(weights.reduce(0, +))
        var country = countries[0]
        for (name, weight) in zip(countries, weights) {
            if pick < weight {
                country = name
                break
            }
            pick -= weight
        }
        let countryClubs = clubs[country] ?? ["Independent"]
        let club = countryClubs[identity.below(countryClubs.count)]
        let name = firstNames[identity.below(firstNames.count)] + " " + lastNames[identity.below(lastNames.count)]
        // Born between 1975-01-01 and 2008-12-31, to the second (Unix seconds).
        let born = 157_766_400 + identity.below(1_230_681_600 - 157_766_400)
        var form = SplitMix64(seed: UInt64(id) &* 1_000_003 &+ UInt64(year))
        return Athlete(
            id: id, licence: licence(country: country, id: id), name: name, country: country, club: club,
            points: form.below(maximumPoints + 1), born: Date(timeIntervalSince1970: TimeInterval(born)))
    }

    /// A licence: the country and the id, `NOR-00042`.
    static func licence(country: String, id: Int) -> String {
        let digits = String(id)
        return country + "-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    /// Writes `athletes` as a file of JSON lines, one document per line, as a server would
    /// ship them: each value converted by the documented `JSONValue(encoding:dates:)`, with
    /// the date strategy of the store that imports them.
    static func writeJSONLines(_ athletes: [Athlete], to path: String, dates: DateStrategy) throws {
        var data = Data()
        for athlete in athletes {
            data.append(try JSONValue(encoding: athlete, dates: dates).canonicalData())
            data.append(0x0A)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}

/// SplitMix64 (Steele, Lea and Flood): a tiny deterministic generator, the same on every
/// platform (Swift's own generators are seeded randomly).
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<n` (`n` > 0).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
