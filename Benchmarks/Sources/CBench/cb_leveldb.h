#ifndef KVDOCS_CB_LEVELDB_H
#define KVDOCS_CB_LEVELDB_H
// LevelDB's C API for the floors. Over the system library, its own header. In the bundled
// branch (KVDOCS_BUNDLED_LEVELDB), the declarations of the CLevelDB module this target then
// depends on (Sources/CLevelDBBundled/include/shim.h, checked against LevelDB's header there):
// including <leveldb/c.h> from C would make a compiler that builds modules build all of
// firebase/leveldb's `leveldb` module, whose other headers are C++.
#ifdef KVDOCS_BUNDLED_LEVELDB
#include "shim.h"
#else
#include <leveldb/c.h>
#endif
#endif
