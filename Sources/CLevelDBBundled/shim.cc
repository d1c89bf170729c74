// The bundled CLevelDB's one translation unit. Compiled as C++ (where firebase/leveldb's
// `leveldb` module, C++ headers and all, builds), it includes LevelDB's C API and then this
// module's header: a declaration there that differs from LevelDB's is a conflicting
// declaration of a C function, an error, so the two cannot drift apart.
#include <leveldb/c.h>

#include "shim.h"

static_assert(leveldb_no_compression == 0 && leveldb_snappy_compression == 1,
              "shim.h's compression constants are LevelDB's");
