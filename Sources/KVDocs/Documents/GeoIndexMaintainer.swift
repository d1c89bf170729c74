import Foundation

/// A geo index of a collection: one entry per document whose field holds a point.
///
/// **Layout.** Under the index's subspace `("g", collection, index)`: the 8 bytes of the
/// point's leaf cell code (``GeoCell``, big-endian, so key order is Z-order), then the
/// tuple encoding of the id → the point's latitude and longitude as two big-endian
/// `Double` bit patterns. A query reads a few ranges of cell codes and measures the exact
/// distance from the stored coordinates, without reading documents.
///
/// **Invariants.** A document has an entry if and only if its field holds a valid point
/// (``GeoPoint/init(json:)``), and the entry holds that point's coordinates exactly. A
/// write whose field is present but holds no valid point throws, writing nothing.
struct GeoIndexMaintainer: IndexMaintainer {
    let identity: IndexIdentity
    let definition: GeoIndexDefinition
    let subspace: Subspace

    init(collection: String, definition: GeoIndexDefinition, subspace: Subspace) {
        self.identity = IndexIdentity(collection, definition.name, .geo)
        self.definition = definition
        self.subspace = subspace
    }

    var definitionJSON: JSONValue { definition.json }
    /// 1: `(cell code, id) → (latitude, longitude)`.
    var formatVersion: Int64 { 1 }
    var keyRange: KeyRange { subspace.range }

    func validate(id: TupleElement, document: JSONValue) throws {
        _ = try point(in: document, id: id)
    }

    func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let after = try new.flatMap { try point(in: $0, id: id) }
        let before = old.flatMap { try? point(in: $0, id: id) }
        if before == after { return }
        let idBytes = Tuple([id]).encoded
        if let before { context.delete(key(before, idBytes)) }
        if let after { context.put(key(after, idBytes), Self.value(after)) }
    }

    /// The point `document` holds in the indexed field, `nil` when the field is missing.
    /// - Throws: `.invalidArgument` naming the index, the field, the value and the document
    ///   when the field holds no valid point.
    func point(in document: JSONValue, id: TupleElement) throws -> GeoPoint? {
        guard let value = definition.field.values(in: document).first else { return nil }
        switch GeoPoint.parse(value) {
        case .success(let point): return point
        case .failure(let error):
            var shown = value.compactDescription
            if shown.count > 200 { shown = String(shown.prefix(200)) + "…" }
            throw KVDocsError(.invalidArgument, "geo index \(definition.name) of collection \"\(identity.collection)\": field \(definition.field) of document \(DocumentStore.idValue(id).compactDescription) holds \(shown), which is not a point: \(error.reason)")
        }
    }

    /// The entry key of `point` for the document whose encoded id is `idBytes`.
    func key(_ point: GeoPoint, _ idBytes: [UInt8]) -> [UInt8] {
        var key = subspace.prefix
        key.reserveCapacity(key.count + 8 + idBytes.count)
        Self.appendBigEndian(GeoCell(leafOf: point).code, to: &key)
        key.append(contentsOf: idBytes)
        return key
    }

    /// The key of the first entry of leaf code `code` (ranges of codes are ranges of keys).
    func key(code: UInt64) -> [UInt8] {
        var key = subspace.prefix
        Self.appendBigEndian(code, to: &key)
        return key
    }

    /// The key range of the leaf codes in `codes` (62-bit codes: the successor never overflows).
    func keyRange(_ codes: ClosedRange<UInt64>) -> KeyRange {
        KeyRange(lower: .included(key(code: codes.lowerBound)), upper: .excluded(key(code: codes.upperBound + 1)))
    }

    static func value(_ point: GeoPoint) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        appendBigEndian(point.latitude.bitPattern, to: &bytes)
        appendBigEndian(point.longitude.bitPattern, to: &bytes)
        return bytes
    }

    @inline(__always)
    static func appendBigEndian(_ x: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: x >> UInt64(shift))) }
    }

    @inline(__always)
    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var x: UInt64 = 0
        for i in 0..<8 { x = x << 8 | UInt64(bytes[offset + i]) }
        return x
    }

    func describe(key: [UInt8]) -> String? {
        let prefix = subspace.prefix
        guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return nil }
        let code = key.withUnsafeBytes { Self.readBigEndian($0, at: prefix.count) }
        let id = (try? Tuple(decoding: key[(prefix.count + 8)...]).elements.first).map { DocumentStore.idValue($0).compactDescription } ?? "?"
        return "geo entry of document \(id) in cell 0x\(String(code, radix: 16))"
    }

    func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: GeoIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]

        mutating func add(id: TupleElement, document: JSONValue) {
            // A document whose field holds no point has no entry (a write could not store one).
            guard let point = try? maintainer.point(in: document, id: id) else { return }
            entries[maintainer.key(point, Tuple([id]).encoded)] = GeoIndexMaintainer.value(point)
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] { entries }
    }
}

extension GeoIndexDefinition {
    /// The definition as the catalog stores it (and the schema JSON writes it).
    var json: JSONValue {
        ["name": .string(name), "fields": [.string(field.description)], "type": "geo"]
    }
}
