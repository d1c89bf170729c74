import KVDocuments
import KVKeys
import KVStorage
import KVSupport

extension DocumentStore {
    /// The store's replication identity: 32 lowercase hex digits, made at random the first
    /// time it is asked for and kept in the catalog (`("m", "uuid")`) from then on.
    ///
    /// Replication names each side by it (CouchDB's server `uuid`), so the checkpoints of a
    /// replication between two stores are found again after a restart, and a copy of a
    /// store's directory keeps the identity of the store it copies.
    /// - Throws: the write's error when the store has none yet and cannot record one (a
    ///   database opened read-only), `.corruption` for a damaged record, storage errors.
    public func uuid() throws -> String {
        if let existing = try records.uuid(in: storage) { return existing }
        return try performWrites(sync: true) { context in
            // Another writer may have made it between the read above and this write.
            if let existing = try records.uuid(in: storage) { return existing }
            let made = Self.randomHex(bytes: 16)
            records.putUUID(made, in: context.batch)
            return made
        }
    }

    /// `bytes` random bytes as lowercase hex digits.
    package static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
