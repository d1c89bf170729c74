import Foundation
import KVDocs

/// The people collection of the document suites: secondary, unique, multi-valued, nested
/// and compound indexes, and a text index.
package let peopleSchemaJSON = #"""
    {"collections": {
      "people": {
        "primaryKey": "id",
        "indexes": [
          {"name": "by_age",        "fields": ["age"]},
          {"name": "by_last_first", "fields": ["last", "first"]},
          {"name": "by_email",      "fields": ["email"], "unique": true},
          {"name": "by_tag",        "fields": ["tags[]"]},
          {"name": "by_city",       "fields": ["address.city"]},
          {"name": "by_city_age",   "fields": ["address.city", "age"]}
        ],
        "text": [{"name": "bio_text", "fields": ["bio", "title"]}]
      }}}
    """#

/// The people schema, read from ``peopleSchemaJSON``.
package func peopleSchema() throws -> DocumentSchema {
    try DocumentSchema(json: Data(peopleSchemaJSON.utf8), file: "people.json")
}

/// Opens a document store with the people schema on a temporary database.
package func withPeopleStore<R>(_ body: (DocumentStore, DocumentCollection) throws -> R) throws -> R {
    try withTemporaryDatabase { db, _ throws in
        let store = try DocumentStore(database: db, schema: try peopleSchema())
        return try body(store, try store.collection("people"))
    }
}
