import Foundation
import KVStorage
import KVSupport

/// What a document store's catalog says at one state of the database: the schema, every
/// index's state, and the maintainers of the schema's indexes (compiled once per catalog
/// generation, not per write).
///
/// Reads take it from the same snapshot as the data they read, so a query is always
/// planned with the schema and index states of the data it scans; writes take it under the
/// writer lock, from the latest state.
package struct CompiledCatalog: Sendable {
    let generation: Int64
    package let schema: DocumentSchema
    package let states: [IndexIdentity: IndexState]
    /// Maintainers by collection, in declaration order.
    let maintainers: [String: [any IndexMaintainer]]
    /// The planner's choices of index by query shape, for this generation.
    let plans = PlanCache()

    init(generation: Int64, schema: DocumentSchema, states: [IndexIdentity: IndexState], layout: Layout) {
        self.init(generation: generation, schema: schema, states: states, maintainers: Self.compile(schema, layout))
    }

    private init(
        generation: Int64, schema: DocumentSchema, states: [IndexIdentity: IndexState],
        maintainers: [String: [any IndexMaintainer]]
    ) {
        self.generation = generation
        self.schema = schema
        self.states = states
        self.maintainers = maintainers
    }

    /// The maintainers of every index of `schema`, by collection.
    private static func compile(_ schema: DocumentSchema, _ layout: Layout) -> [String: [any IndexMaintainer]] {
        var maintainers: [String: [any IndexMaintainer]] = [:]
        for (name, collection) in schema.collections {
            maintainers[name] = collection.maintainers(collection: name, layout: layout)
        }
        return maintainers
    }

    /// The maintainers of `collection` (exact name).
    package func maintainers(of collection: String) -> [any IndexMaintainer] {
        guard schema[collection: collection] != nil else { return [] }
        return maintainers[collection] ?? []
    }

    /// The maintainer of an index of the schema.
    package func maintainer(_ index: IndexIdentity) -> (any IndexMaintainer)? {
        maintainers(of: index.collection).first { $0.identity == index }
    }

    /// Whether queries may use `index`: it is in the schema, its stored state is ready, with
    /// the schema's definition and the maintainer's format.
    func isReady(_ index: IndexIdentity) -> Bool {
        guard let maintainer = maintainer(index), let state = states[index] else { return false }
        return state.phase == .ready && state.definition == maintainer.definitionJSON
            && state.format == maintainer.formatVersion
    }

    /// Every index of the schema that is not ready.
    var unready: [any IndexMaintainer] {
        schema.collections.keys.sorted { JSONObject.compareKeys($0, $1) < 0 }
            .flatMap { maintainers(of: $0) }.filter { !isReady($0.identity) }
    }

    /// Reads the catalog as `reader`'s state of the data holds it.
    static func load(_ reader: some KeyValueReader, _ catalog: DocumentCatalog, layout: Layout) throws
        -> CompiledCatalog
    {
        let generation = try catalog.generation(in: reader)
        var schema = try DocumentSchema()
        if let data = try catalog.schemaData(in: reader) {
            do {
                schema = try DocumentSchema(json: Data(data), file: "the stored schema of \(reader.name)")
            } catch let e as KVDocsError {
                throw KVDocsError(.corruption, e.message, path: reader.name, key: catalog.schemaKey)
            }
        }
        let maintainers = compile(schema, layout)
        var states: [IndexIdentity: IndexState] = [:]
        for kind in Set(IndexKindRegistry.all + maintainers.values.joined().map(\.identity.kind)) {
            states.merge(try catalog.indexStates(kind, in: reader)) { $1 }
        }
        return CompiledCatalog(generation: generation, schema: schema, states: states, maintainers: maintainers)
    }
}
