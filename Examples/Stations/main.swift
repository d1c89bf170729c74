// The nearest-station app story, typed end to end: stations with a geo index and their
// departures with an index on (station, time); then, in ONE snapshot, the nearest station
// within 1.5 km of where the user stands and its next five departures.
// Run it with `swift run example-stations DIRECTORY` (the database is DIRECTORY/stations.db,
// made again on every run).
import Foundation
import KVDocs

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let directory = arguments.first else {
    FileHandle.standardError.write(Data("usage: example-stations DIRECTORY\n".utf8))
    exit(2)
}
do {
    try runStory(in: directory)
} catch {
    FileHandle.standardError.write(Data("example-stations: \(error)\n".utf8))
    exit(1)
}
