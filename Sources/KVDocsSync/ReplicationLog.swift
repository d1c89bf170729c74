import Foundation
import KVDocs

/// A replication's checkpoint: the `_local/<replication id>` document it keeps on both
/// peers, in the shape of CouchDB's replication protocol ("Replication Log"):
///
/// ```json
/// {"session_id": "…", "source_last_seq": 5, "replication_id_version": 3,
///  "history": [{"session_id": "…", "start_time": "Thu, 10 Oct 2013 05:56:38 GMT",
///               "end_time": "…", "start_last_seq": 3, "end_last_seq": 5, "recorded_seq": 5,
///               "missing_checked": 2, "missing_found": 2, "docs_read": 2, "docs_written": 2,
///               "doc_write_failures": 0}]}
/// ```
///
/// PouchDB's checkpoints (`last_seq`, and `history` entries of `session_id` and
/// `last_seq`) are read as well.
struct ReplicationLog: Sendable, Hashable {
    /// One session's entry in the history, newest first.
    struct Entry: Sendable, Hashable {
        var sessionID: String
        var recordedSequence: JSONValue
        var fields: JSONObject
    }

    /// The session that wrote the log last.
    var sessionID: String?
    /// The source's sequence that session reached.
    var sourceLastSequence: JSONValue?
    /// Earlier sessions, newest first.
    var history: [Entry]

    /// The most history entries a log keeps (CouchDB's and PouchDB's limit).
    static let maximumHistory = 50

    /// The log in `body`, or an empty one when it is not one (an unknown shape restarts the
    /// replication from the start, which is safe: replication is idempotent).
    init(_ body: JSONObject?) {
        guard let body else {
            self.init(sessionID: nil, sourceLastSequence: nil, history: [])
            return
        }
        var history: [Entry] = []
        if case .array(let entries)? = body["history"] {
            for case .object(let entry) in entries {
                guard case .string(let session)? = entry["session_id"],
                    let recorded = entry["recorded_seq"] ?? entry["last_seq"]
                else { continue }
                history.append(Entry(sessionID: session, recordedSequence: recorded, fields: entry))
            }
        }
        var session: String?
        if case .string(let s)? = body["session_id"] { session = s }
        self.init(
            sessionID: session, sourceLastSequence: body["source_last_seq"] ?? body["last_seq"], history: history)
    }

    init(sessionID: String?, sourceLastSequence: JSONValue?, history: [Entry]) {
        self.sessionID = sessionID
        self.sourceLastSequence = sourceLastSequence
        self.history = history
    }

    /// Where a replication whose logs on the source and the target are these starts, and
    /// the history it carries on (the protocol's "Compare Replication Logs"): the source's
    /// last sequence when the last sessions agree, else the recorded sequence of the newest
    /// session both histories hold, else the start.
    static func startingPoint(source: ReplicationLog, target: ReplicationLog) -> (
        since: JSONValue, history: [Entry]
    ) {
        if let session = source.sessionID, session == target.sessionID, let since = source.sourceLastSequence {
            return (since, source.history)
        }
        var sourceRest = source.history[...]
        var targetRest = target.history[...]
        while let s = sourceRest.first, let t = targetRest.first {
            if targetRest.contains(where: { $0.sessionID == s.sessionID }) {
                return (s.recordedSequence, Array(sourceRest.dropFirst()))
            }
            if sourceRest.dropFirst().contains(where: { $0.sessionID == t.sessionID }) {
                return (t.recordedSequence, Array(targetRest.dropFirst()))
            }
            sourceRest = sourceRest.dropFirst()
            targetRest = targetRest.dropFirst()
        }
        return (.int(0), [])
    }

    /// The log's document body.
    var body: JSONObject {
        var fields: [(String, JSONValue)] = []
        if let sessionID { fields.append(("session_id", .string(sessionID))) }
        if let sourceLastSequence { fields.append(("source_last_seq", sourceLastSequence)) }
        fields.append(("replication_id_version", 3))
        fields.append(("history", .array(history.prefix(Self.maximumHistory).map { .object($0.fields) })))
        return JSONObject(fields)
    }

    /// A time as the protocol writes it (RFC 5322 in GMT: `Thu, 10 Oct 2013 05:56:38 GMT`).
    static func timestamp(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format:
                    "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT") ?? .gmt,
                calendar: Calendar(identifier: .gregorian)))
    }
}
