import Foundation
import KVGeo
import KVKeys
import KVStorage
import KVSupport

/// The geo index of a collection: keeps a row-level ``GeoIndex`` with one entry per
/// document whose field holds a point (its layout is there).
///
/// **Invariants.** A document has an entry if and only if its field holds a valid point
/// (``GeoPoint/init(json:)``), and the entry holds that point's coordinates exactly. A
/// write whose field is present but holds no valid point throws, writing nothing.
package struct GeoIndexMaintainer: IndexMaintainer {
    package let identity: IndexIdentity
    let definition: GeoIndexDefinition
    let index: GeoIndex

    init(collection: String, definition: GeoIndexDefinition, subspace: Subspace) {
        self.identity = IndexIdentity(collection, definition.name, .geo)
        self.definition = definition
        self.index = GeoIndex(subspace: subspace, name: identity.description)
    }

    var subspace: Subspace { index.subspace }
    package var definitionJSON: JSONValue { definition.json }
    /// 1: `(cell code, id) → (latitude, longitude)`.
    package var formatVersion: Int64 { 1 }
    package var keyRange: KeyRange { index.keyRange }

    package func validate(id: TupleElement, document: JSONValue) throws {
        _ = try point(in: document, id: id)
    }

    package func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let after = try new.flatMap { try point(in: $0, id: id) }
        let before = old.flatMap { try? point(in: $0, id: id) }
        // Checked here too, so a write that leaves the point alone does not encode the id.
        if before == after { return }
        index.update(
            idBytes: context.encodedID(id), before: before, after: after,
            put: { context.put($0, $1) }, delete: { context.delete($0) })
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
            throw KVDocsError(
                .invalidArgument,
                "geo index \(definition.name) of collection \"\(identity.collection)\": field \(definition.field) of document \(DocumentStore.idValue(id).compactDescription) holds \(shown), which is not a point: \(error.reason)"
            )
        }
    }

    /// The stored value of an entry (``GeoIndex/value(_:)``).
    package static func value(_ point: GeoPoint) -> [UInt8] { GeoIndex.value(point) }

    package func describe(key: [UInt8]) -> String? {
        guard let (code, idBytes) = index.parse(key: key) else { return nil }
        let id =
            (try? Tuple(decoding: idBytes).elements.first).map { DocumentStore.idValue($0).compactDescription } ?? "?"
        return "geo entry of document \(id) in cell 0x\(String(code, radix: 16))"
    }

    package func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: GeoIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]

        mutating func add(id: TupleElement, document: JSONValue) {
            // A document whose field holds no point has no entry (a write could not store one).
            guard let point = try? maintainer.point(in: document, id: id) else { return }
            entries[maintainer.index.key(point, Tuple([id]).encoded)] = GeoIndex.value(point)
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
