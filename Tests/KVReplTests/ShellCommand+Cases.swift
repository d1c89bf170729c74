import KVDocs

@testable import KVReplCore

// The parsed commands the parser tests expect, spelled as the commands are written: each
// builds its command from the command table's definition (CommandTable), so a test compares
// what the parser made with what the definition makes of the same arguments.
extension ShellCommand {
    static func get(_ key: [UInt8]) -> ShellCommand { CommandTable.get(key) }
    static func put(_ key: [UInt8], _ value: [UInt8]) -> ShellCommand {
        CommandTable.put(.init(key: key, value: value))
    }
    static func del(_ key: [UInt8]) -> ShellCommand { CommandTable.del(key) }
    static func scan(_ o: ScanOptions) -> ShellCommand { CommandTable.scan(o) }
    static func delrange(_ o: ScanOptions) -> ShellCommand { CommandTable.delrange(o) }
    static var stats: ShellCommand { CommandTable.stats(NoArguments()) }
    static func property(_ name: String) -> ShellCommand { CommandTable.property(name) }
    static func size(from: [UInt8]?, to: [UInt8]?) -> ShellCommand { CommandTable.size(.init(from: from, to: to)) }
    static func compact(from: [UInt8]?, to: [UInt8]?) -> ShellCommand {
        CommandTable.compact(.init(from: from, to: to))
    }
    static var snapshot: ShellCommand { CommandTable.snapshot(NoArguments()) }
    static var release: ShellCommand { CommandTable.release(NoArguments()) }
    static func dump(_ file: String) -> ShellCommand { CommandTable.dump(file) }
    static func load(_ file: String) -> ShellCommand { CommandTable.load(file) }
    static var keyspaces: ShellCommand { CommandTable.keyspaces(.show) }
    static func keyspacesLoad(_ file: String) -> ShellCommand { CommandTable.keyspaces(.load(file)) }
    static func sync(_ on: Bool?) -> ShellCommand { CommandTable.sync(on) }
    static var repair: ShellCommand { CommandTable.repair(NoArguments()) }
    static func format(_ format: OutputFormat??) -> ShellCommand { CommandTable.format(format) }
    static func timer(_ on: Bool?) -> ShellCommand { CommandTable.timer(on) }
    static func help(_ topic: String?) -> ShellCommand { CommandTable.help(topic) }
    static var quit: ShellCommand { CommandTable.quit(NoArguments()) }
    static var schema: ShellCommand { CommandTable.schema(.show) }
    static func schemaLoad(_ file: String) -> ShellCommand { CommandTable.schema(.load(file)) }
    static var collections: ShellCommand { CommandTable.collections(NoArguments()) }
    static func indexes(_ collection: String) -> ShellCommand { CommandTable.indexes(collection) }
    static func insert(_ collection: String, _ document: JSONValue) -> ShellCommand {
        CommandTable.insert(.init(collection: collection, document: document))
    }
    static func upsert(_ collection: String, _ document: JSONValue) -> ShellCommand {
        CommandTable.upsert(.init(collection: collection, document: document))
    }
    static func doc(_ collection: String, _ id: JSONValue) -> ShellCommand {
        CommandTable.doc(.init(collection: collection, id: id))
    }
    static func remove(_ collection: String, _ id: JSONValue) -> ShellCommand {
        CommandTable.remove(.init(collection: collection, id: id))
    }
    static func importFile(_ collection: String, _ file: String) -> ShellCommand {
        CommandTable.importFile(.init(collection: collection, file: file))
    }
    static func exportFile(_ collection: String, _ file: String) -> ShellCommand {
        CommandTable.exportFile(.init(collection: collection, file: file))
    }
    static func find(_ collection: String, _ query: DocumentQuery) -> ShellCommand {
        CommandTable.find(.init(collection: collection, query: query))
    }
    static func count(_ collection: String, _ query: DocumentQuery) -> ShellCommand {
        CommandTable.count(.init(collection: collection, query: query))
    }
    static func explain(_ collection: String, _ query: DocumentQuery) -> ShellCommand {
        CommandTable.explain(.find(.init(collection: collection, query: query)))
    }
    static func search(_ collection: String, _ text: String, limit: Int?, highlight: Bool) -> ShellCommand {
        CommandTable.search(.init(collection: collection, text: text, limit: limit, highlight: highlight))
    }
    static func near(_ near: Near) -> ShellCommand { CommandTable.near(near) }
    static func explainNear(_ near: Near) -> ShellCommand { CommandTable.explain(.near(near)) }
    static func knn(_ knn: Knn) -> ShellCommand { CommandTable.knn(knn) }
    static func hybrid(_ hybrid: Hybrid) -> ShellCommand { CommandTable.hybrid(hybrid) }
    static func explainKnn(_ knn: Knn) -> ShellCommand { CommandTable.explain(.knn(knn)) }
    static func terms(_ collection: String, index: String?, prefix: String, limit: Int?) -> ShellCommand {
        CommandTable.terms(.init(collection: collection, index: index, prefix: prefix, limit: limit))
    }
    static func verify(_ collection: String?) -> ShellCommand { CommandTable.verify(collection) }
    static func reindex(_ collection: String, _ index: String?) -> ShellCommand {
        CommandTable.reindex(.init(collection: collection, index: index))
    }
    static func optimize(_ collection: String, _ index: String?) -> ShellCommand {
        CommandTable.optimize(.init(collection: collection, index: index))
    }
    static func salvage(quarantine: String?) -> ShellCommand { CommandTable.salvage(quarantine) }
    static func changes(since: Int64, limit: Int?) -> ShellCommand {
        CommandTable.changes(.init(since: since, limit: limit))
    }
    static func conflicts(_ collection: String) -> ShellCommand { CommandTable.conflicts(collection) }
    static func resolve(_ collection: String, _ id: JSONValue, _ revision: String) -> ShellCommand {
        CommandTable.resolve(.init(collection: collection, id: id, revision: revision))
    }
    static func revs(_ collection: String, _ id: JSONValue) -> ShellCommand {
        CommandTable.revs(.init(collection: collection, id: id))
    }
    static func replicate(source: String, target: String, continuous: Bool) -> ShellCommand {
        CommandTable.replicate(.init(source: source, target: target, continuous: continuous))
    }
    static func serve(port: Int, bind: String, user: String?, passwordFile: String?) -> ShellCommand {
        CommandTable.serve(.init(port: port, bind: bind, user: user, passwordFile: passwordFile))
    }
    static var layers: ShellCommand { CommandTable.layers(NoArguments()) }
    static func replaceBase(_ path: String, allowingUnrelated: Bool) -> ShellCommand {
        CommandTable.replaceBase(.init(path: path, allowingUnrelated: allowingUnrelated))
    }
    static func backup(_ directory: String, compression: LevelDBOptions.Compression? = nil) -> ShellCommand {
        CommandTable.backup(.init(path: directory, compression: compression))
    }
    static func writeBase(_ directory: String) -> ShellCommand { CommandTable.writeBase(directory) }
}
