// The nearest-station app story, typed end to end: stations with a geo index and their
// departures with an index on (station, time); then, in ONE snapshot, the nearest station
// within 1.5 km of where the user stands and its next five departures.
// Then the watch app's store: that network as a base shipped in the bundle, the user's
// favourites in a user layer over it (AppPaths.swift: the paths an iOS and a watchOS app use).
// Run it with `swift run example-stations DIRECTORY`: on Linux DIRECTORY stands for the app's
// container (its Application Support directory holds stations.db and stations-user.db;
// DIRECTORY/bundle/stations.db is the shipped base), all made again on every run.
import Foundation
import KVDocs

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let directory = arguments.first else {
    FileHandle.standardError.write(Data("usage: example-stations DIRECTORY\n".utf8))
    exit(2)
}
#if !canImport(Darwin)
// Here the directory stands for the app's container: Foundation's Application Support
// directory on Linux is $XDG_DATA_HOME.
setenv("XDG_DATA_HOME", directory, 1)
#endif
do {
    try runStory(in: directory)
} catch {
    FileHandle.standardError.write(Data("example-stations: \(error)\n".utf8))
    exit(1)
}
