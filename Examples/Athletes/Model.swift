import Foundation
import KVDocs

/// An athlete of the downloaded database. `born` is a `Date`: the store writes it as Unix
/// seconds (its default ``DateStrategy``), so `where born > 1104537600` means "born after
/// 2005-01-01 00:00 UTC".
struct Athlete: Codable, Sendable {
    var id: Int
    var licence: String
    var name: String
    var country: String
    var club: String
    var points: Int
    var born: Date
}

/// A group the user made: written to the user's own layer, never to the base.
struct Group: Codable, Sendable {
    var id: String
    var name: String
    var members: [Int]
}

/// The schema of the base and of the user layer (they must agree on shared collections).
///
/// - `by_country_points` is a plain compound index: it serves
///   `where country = ? order by points desc limit 10` (ten index entries read) and
///   `count where country = ?` without any condition on `points`.
/// - `by_licence` is unique: across both layers, no two athletes share a licence.
func athletesSchema() throws -> DocumentSchema {
    try DocumentSchema(collections: [
        "athletes": CollectionSchema(
            primaryKey: "id",
            indexes: [
                SecondaryIndexDefinition(name: "by_country_points", fields: ["country", "points"]),
                SecondaryIndexDefinition(name: "by_licence", fields: ["licence"], unique: true)
            ]),
        "groups": CollectionSchema(primaryKey: "id")
    ])
}
