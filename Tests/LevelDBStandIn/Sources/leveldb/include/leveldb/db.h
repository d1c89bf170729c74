// The stand-in of firebase/leveldb's include/leveldb/db.h: the system's header. The stand-in
// has every public header firebase ships, so that its module (which SwiftPM makes of this
// directory) has the same headers, C++ ones included, as the real one.
#ifndef KVDOCS_LEVELDB_STANDIN_DB_H
#define KVDOCS_LEVELDB_STANDIN_DB_H
#include_next <leveldb/db.h>
#endif
