#ifndef KVDOCS_CLEVELDB_SHIM_H
#define KVDOCS_CLEVELDB_SHIM_H
// LevelDB's C API, from the `leveldb` product of https://github.com/firebase/leveldb (the
// bundled branch of Package.swift: Apple hosts, or KVDOCS_BUNDLED_LEVELDB=1). That build of
// LevelDB has no Snappy, so neither does this module: KVStorage is built with
// KVDOCS_WITHOUT_SNAPPY beside it, and never calls Snappy's C API.
#include <leveldb/c.h>
#endif
