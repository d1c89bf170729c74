import Foundation
import KVDocs

/// Where the stations apps keep their stores, with the paths an iPhone app and a watch app
/// use. The Apple-only lines are under `#if`; on Linux (this repository's CI) the same code
/// runs with the directory given to the example standing for the app's container.
enum AppPaths {
    /// The iPhone app's store: the whole network, in its Application Support directory,
    /// readable from the first unlock after a restart (so that a background refresh can
    /// update the timetable while the phone is locked).
    static func phoneStore() throws -> (path: String, options: LevelDBOptions) {
        var options = LevelDBOptions()
        options.fileProtection = .completeUntilFirstUserAuthentication
        return (try LevelDBDirectory.applicationSupport("stations.db"), options)
    }

    /// The watch app's base: the timetable, shipped read-only in the app bundle as
    /// `stations.db`. It was written with `write-base` (uncompressed: the LevelDB of Apple
    /// platforms has no Snappy) when the app was built; `built` is that build's output
    /// here, where there is no bundle.
    static func watchBase(built: String) -> String {
        #if os(watchOS) || os(iOS)
        if let bundled = Bundle.main.path(forResource: "stations", ofType: "db") { return bundled }
        #endif
        return built
    }

    /// The watch app's user layer (its favourites), over the base. In the App Group
    /// `group.example.stations` where the platform has App Groups, so that the watch app's
    /// complication reads the same favourites (one process opens the store at a time);
    /// in Application Support elsewhere.
    static func watchUserStore() throws -> String {
        #if os(watchOS)
        return try LevelDBDirectory.appGroup("group.example.stations", "stations-user.db")
        #else
        return try LevelDBDirectory.applicationSupport("stations-user.db")
        #endif
    }
}
