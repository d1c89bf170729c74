#ifndef KVDOCS_CLEVELDB_SHIM_H
#define KVDOCS_CLEVELDB_SHIM_H
// LevelDB's C API, as installed by Debian's libleveldb-dev or Homebrew's leveldb.
#include <leveldb/c.h>
#endif
