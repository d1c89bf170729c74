// The stand-in's public header: the system's LevelDB C API, found on the include path
// after this directory (Debian: /usr/include/leveldb/c.h). firebase/leveldb ships its own
// copy of the same header, at the same path, with the same functions (LevelDB 1.22/1.23).
#ifndef KVDOCS_LEVELDB_STANDIN_C_H
#define KVDOCS_LEVELDB_STANDIN_C_H
#include_next <leveldb/c.h>
#endif
