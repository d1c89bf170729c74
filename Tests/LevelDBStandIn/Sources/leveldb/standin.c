// SwiftPM builds a C target from its sources, and this target has no LevelDB sources of its
// own (the library it links is the system's): this file is its one translation unit. It
// includes the public header, so that a header that does not compile fails the stand-in's
// build rather than KVDocs'.
#include <leveldb/c.h>

int kvdocs_standin_leveldb_major_version(void) { return leveldb_major_version(); }
