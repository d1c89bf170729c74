// A layered store's paths and the app's schema (README, "Layered databases").
let userPath = FileManager.default.temporaryDirectory.appendingPathComponent("user.db").path
let downloadedPath = FileManager.default.temporaryDirectory.appendingPathComponent("stations-2.db").path
let backupPath = FileManager.default.temporaryDirectory.appendingPathComponent("backup").path
let appSchema = try DocumentSchema(json: Data(#"{"collections": {"stations": {}, "groups": {}}}"#.utf8))
