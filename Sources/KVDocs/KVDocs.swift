// The umbrella module: `import KVDocs` brings every layer of the library, from the LevelDB
// wrapper to documents. Each layer is a module of its own (KVSupport, KVStorage, KVKeys,
// KVText, KVGeo, KVDocuments), so that the compiler refuses a dependency that points up.
@_exported import KVDocuments
@_exported import KVGeo
@_exported import KVKeys
@_exported import KVStorage
@_exported import KVSupport
@_exported import KVText
