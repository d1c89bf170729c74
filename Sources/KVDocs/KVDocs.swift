// The umbrella module: `import KVDocs` brings every layer of the library, from the LevelDB
// wrapper to documents and the data side of replication. Each layer is a module of its own
// (KVSupport, KVStorage, KVKeys, KVText, KVGeo, KVDocuments, KVReplication), so that the
// compiler refuses a dependency that points up.
@_exported import KVDocuments
@_exported import KVGeo
@_exported import KVKeys
@_exported import KVReplication
@_exported import KVStorage
@_exported import KVSupport
@_exported import KVText
@_exported import KVVector
