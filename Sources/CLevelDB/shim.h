#ifndef KVDOCS_CLEVELDB_SHIM_H
#define KVDOCS_CLEVELDB_SHIM_H
// LevelDB's C API, as installed by Debian's libleveldb-dev or Homebrew's leveldb.
#include <leveldb/c.h>
// Snappy's C API: KVDocs reads table blocks itself to name a damaged table (TableFileCheck).
#include <snappy-c.h>
#endif
