#ifndef KVDOCS_CB_DB_H
#define KVDOCS_CB_DB_H
// The handles behind cbench.h's cb_db, shared by the files of this target.
#include "cb_leveldb.h"

struct cb_db {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_cache_t *cache;
    leveldb_filterpolicy_t *policy;
    leveldb_readoptions_t *read;
    leveldb_writeoptions_t *write;
    leveldb_writeoptions_t *write_sync;
};

#endif
