// The athletes app story, typed end to end: a downloaded base of 18,000 athletes, the
// user's own groups and a correction in a layer over it, reports read from one snapshot,
// then the base replaced by next season's while the user's data stays.
// Run it with `swift run example-athletes DIRECTORY` (the story's files go there; an
// earlier run's files in it are replaced).
import Foundation
import KVDocs

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let directory = arguments.first else {
    FileHandle.standardError.write(Data("usage: example-athletes DIRECTORY\n".utf8))
    exit(2)
}
do {
    try runStory(in: directory)
} catch {
    FileHandle.standardError.write(Data("example-athletes: \(error)\n".utf8))
    exit(1)
}
