// What every block of the README and the DocC articles may assume, checked before each
// block in an outer scope (a block may declare these names again): a path, an open
// database, a schema and a document store over that database with that schema.
let path = FileManager.default.temporaryDirectory.appendingPathComponent("doc-code.db").path
let db = try LevelDB(path: path)
let schema = try DocumentSchema()
let store = try DocumentStore(database: db, schema: schema)
