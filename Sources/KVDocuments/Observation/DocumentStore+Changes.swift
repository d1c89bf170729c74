import Foundation
import KVKeys
import KVSupport

extension DocumentStore {
    /// The changes after `sequence`, in order, at most `limit` of them. Any sequence number
    /// is accepted: one below 1 means "from the first change", and `Int64.max` (after which
    /// no change can come) gives none.
    /// - Throws: `.invalidArgument` for a negative limit.
    public func changes(since sequence: Int64 = 0, limit: Int? = nil) throws -> [DocumentChange] {
        if let limit, limit < 0 {
            throw KVDocsError(
                .invalidArgument, "changes: limit must not be negative (got \(limit))", path: storage.name)
        }
        let (next, overflow) = sequence.addingReportingOverflow(1)
        if overflow { return [] }
        let layout = self.layout
        let range = layout.changes.range.starting(at: layout.change(next))
        let cursor = try storage.scan(range, order: .forward)
        var changes: [DocumentChange] = []
        while limit.map({ changes.count < $0 }) ?? true,
            let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) })
        {
            let seq = try layout.changes.unpack(key).int64(at: 0)
            let t = try Tuple(decoding: value)
            guard let op = DocumentChange.Operation(rawValue: try t.string(at: 2)) else {
                throw KVDocsError(.corruption, "change \(seq) has an unknown operation", path: storage.name, key: key)
            }
            changes.append(
                DocumentChange(
                    sequence: seq, collection: try t.string(at: 0), id: Self.idValue(try t.element(at: 1)),
                    operation: op))
        }
        return changes
    }

    /// New changes as they are committed, for in-process observers. The stream starts with
    /// the next write and ends when the caller stops iterating or the database closes.
    /// Writes made through any store open on the same database and root are delivered; a
    /// data migration's changes are delivered when it completes (none for one undone).
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// for await change in store.changeStream() { refresh(change.collection, change.id) }
    /// ```
    public func changeStream() -> AsyncStream<DocumentChange> {
        let (stream, continuation) = AsyncStream<DocumentChange>.makeStream(bufferingPolicy: .unbounded)
        let token = UUID()
        hub.add(stream: continuation, id: token)
        continuation.onTermination = { [hub] _ in hub.removeStream(token) }
        return stream
    }

    /// Records a committed batch and delivers its changes in order.
    /// REQUIRES: the exclusive writer lock is held (so deliveries are ordered).
    func published(_ changes: [DocumentChange], lastSequence: Int64) {
        state.withLock { $0.lastSequence = lastSequence }
        hub.publish(changes)
    }
}
