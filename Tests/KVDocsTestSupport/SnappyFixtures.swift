import KVDocs
import Testing

extension Trait where Self == ConditionTrait {
    /// Runs the test only in a build with Snappy: it opens a committed fixture database whose
    /// tables the code of its time wrote Snappy-compressed, which a build without Snappy
    /// (the bundled LevelDB of Apple platforms, scripts/test-bundled) refuses with
    /// `.unsupportedCompression`. That refusal of every such fixture is itself tested there
    /// (`SnappyAbsenceTests`).
    package static var readsSnappyFixture: Self {
        .enabled(
            if: LevelDBOptions.Compression.snappyIsAvailable,
            "its fixture's tables are Snappy-compressed, and this build has no Snappy")
    }
}
