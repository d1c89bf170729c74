// What the doc comments' examples in Sources/KVDocs may assume (marker
// `/// <!-- doc-code: preamble=examples -->`): the app types they write and read, the
// collections they name, and a few values.
struct Person: Codable, Sendable { var id: String; var name: String; var age: Int }
struct Trip: Codable, Sendable { var id: String; var person: String; var start: Date }
struct Note: Codable, Sendable { var id: Int; var title: String; var body: String }
struct Athlete: Codable, Sendable { var id: Int; var name: String; var country: String; var points: Int }
struct Station: Codable, Sendable { var id: Int; var name: String; var location: JSONValue }
struct Departure: Codable, Sendable { var id: String; var station: String; var time: Date }
struct Group: Codable, Sendable { var id: Int; var members: [String] }
struct ShellSession: Codable, Sendable { var id: UUID; var start: Date }
struct Dashboard: Sendable, Equatable { var people: Int; var trips: Int }
struct Board { func show<T>(_ values: [T]) {} }
func show<T>(_ values: [T]) {}
func refresh(_ collection: String, _ id: JSONValue) {}
let board = Board()
let people = try store.collection("people")
let athletes = try store.collection("athletes", of: Athlete.self)
let sessions = try store.collection("sessions", of: ShellSession.self)
let stations = try store.collection("stations")
let runs = try store.collection("runs")
let imported: [Athlete] = []
let group = Group(id: 12, members: ["s1"])
let here = try GeoPoint(latitude: -31.9505, longitude: 115.8605)
let embedding: [Float] = [0.12, -0.5, 0.33]
var migrator = DocumentMigrator()
let documentsPath = NSTemporaryDirectory(), downloadedPath = path + ".download"
let bundledPath = path + ".bundled", userPath = path + ".user"
let key: [UInt8] = Array("user:1".utf8)
let jpegBytes = [UInt8](repeating: 0xFF, count: 200_000)
var output = Data()
let entries = try db.entries(.all)
var total = 0
let json = #"{"name":"Ada"}"#.utf8
