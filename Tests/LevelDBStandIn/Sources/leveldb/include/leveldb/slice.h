// The stand-in of firebase/leveldb's include/leveldb/slice.h: the system's header. The stand-in
// has every public header firebase ships, so that its module (which SwiftPM makes of this
// directory) has the same headers, C++ ones included, as the real one.
#ifndef KVDOCS_LEVELDB_STANDIN_SLICE_H
#define KVDOCS_LEVELDB_STANDIN_SLICE_H
#include_next <leveldb/slice.h>
#endif
