#ifndef KVDOCS_CLEVELDB_SHIM_H
#define KVDOCS_CLEVELDB_SHIM_H
// The module CLevelDB of the bundled branch (Apple hosts, KVDOCS_BUNDLED_LEVELDB=1): the
// functions of LevelDB's C API that KVStorage calls, declared here rather than by including
// <leveldb/c.h>. That header belongs to the `leveldb` module SwiftPM makes of
// firebase/leveldb's include/leveldb directory, whose other headers are C++: a Swift module
// importing a C module that includes it would make clang build all of `leveldb` as C, and
// fail. shim.cc, compiled as C++, includes both this file and <leveldb/c.h>, so the
// compiler checks every declaration here against LevelDB's own. A function KVStorage starts
// to call is declared here too (the bundled build fails until it is).
//
// That LevelDB has no Snappy: KVStorage is built with KVDOCS_WITHOUT_SNAPPY beside it.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct leveldb_t leveldb_t;
typedef struct leveldb_cache_t leveldb_cache_t;
typedef struct leveldb_comparator_t leveldb_comparator_t;
typedef struct leveldb_filterpolicy_t leveldb_filterpolicy_t;
typedef struct leveldb_iterator_t leveldb_iterator_t;
typedef struct leveldb_options_t leveldb_options_t;
typedef struct leveldb_readoptions_t leveldb_readoptions_t;
typedef struct leveldb_snapshot_t leveldb_snapshot_t;
typedef struct leveldb_writebatch_t leveldb_writebatch_t;
typedef struct leveldb_writeoptions_t leveldb_writeoptions_t;

// LevelDB's compression types (`leveldb_options_set_compression`); shim.cc checks the values.
#ifndef STORAGE_LEVELDB_INCLUDE_C_H_
enum { leveldb_no_compression = 0, leveldb_snappy_compression = 1 };
#endif

leveldb_t* leveldb_open(const leveldb_options_t* options, const char* name, char** errptr);
void leveldb_close(leveldb_t* db);
void leveldb_put(leveldb_t* db, const leveldb_writeoptions_t* options, const char* key, size_t keylen, const char* val, size_t vallen, char** errptr);
void leveldb_delete(leveldb_t* db, const leveldb_writeoptions_t* options, const char* key, size_t keylen, char** errptr);
void leveldb_write(leveldb_t* db, const leveldb_writeoptions_t* options, leveldb_writebatch_t* batch, char** errptr);
char* leveldb_get(leveldb_t* db, const leveldb_readoptions_t* options, const char* key, size_t keylen, size_t* vallen, char** errptr);
leveldb_iterator_t* leveldb_create_iterator(leveldb_t* db, const leveldb_readoptions_t* options);
const leveldb_snapshot_t* leveldb_create_snapshot(leveldb_t* db);
void leveldb_release_snapshot(leveldb_t* db, const leveldb_snapshot_t* snapshot);
char* leveldb_property_value(leveldb_t* db, const char* propname);
void leveldb_approximate_sizes(leveldb_t* db, int num_ranges, const char* const* range_start_key, const size_t* range_start_key_len, const char* const* range_limit_key, const size_t* range_limit_key_len, uint64_t* sizes);
void leveldb_compact_range(leveldb_t* db, const char* start_key, size_t start_key_len, const char* limit_key, size_t limit_key_len);
void leveldb_destroy_db(const leveldb_options_t* options, const char* name, char** errptr);
void leveldb_repair_db(const leveldb_options_t* options, const char* name, char** errptr);
void leveldb_iter_destroy(leveldb_iterator_t*);
uint8_t leveldb_iter_valid(const leveldb_iterator_t*);
void leveldb_iter_seek_to_first(leveldb_iterator_t*);
void leveldb_iter_seek_to_last(leveldb_iterator_t*);
void leveldb_iter_seek(leveldb_iterator_t*, const char* k, size_t klen);
void leveldb_iter_next(leveldb_iterator_t*);
void leveldb_iter_prev(leveldb_iterator_t*);
const char* leveldb_iter_key(const leveldb_iterator_t*, size_t* klen);
const char* leveldb_iter_value(const leveldb_iterator_t*, size_t* vlen);
void leveldb_iter_get_error(const leveldb_iterator_t*, char** errptr);
leveldb_writebatch_t* leveldb_writebatch_create(void);
void leveldb_writebatch_destroy(leveldb_writebatch_t*);
void leveldb_writebatch_clear(leveldb_writebatch_t*);
void leveldb_writebatch_put(leveldb_writebatch_t*, const char* key, size_t klen, const char* val, size_t vlen);
void leveldb_writebatch_delete(leveldb_writebatch_t*, const char* key, size_t klen);
void leveldb_writebatch_iterate(const leveldb_writebatch_t*, void* state, void (*put)(void*, const char* k, size_t klen, const char* v, size_t vlen), void (*deleted)(void*, const char* k, size_t klen));
void leveldb_writebatch_append(leveldb_writebatch_t* destination, const leveldb_writebatch_t* source);
leveldb_options_t* leveldb_options_create(void);
void leveldb_options_destroy(leveldb_options_t*);
void leveldb_options_set_comparator(leveldb_options_t*, leveldb_comparator_t*);
void leveldb_options_set_filter_policy(leveldb_options_t*, leveldb_filterpolicy_t*);
void leveldb_options_set_create_if_missing(leveldb_options_t*, uint8_t);
void leveldb_options_set_error_if_exists(leveldb_options_t*, uint8_t);
void leveldb_options_set_paranoid_checks(leveldb_options_t*, uint8_t);
void leveldb_options_set_write_buffer_size(leveldb_options_t*, size_t);
void leveldb_options_set_max_open_files(leveldb_options_t*, int);
void leveldb_options_set_cache(leveldb_options_t*, leveldb_cache_t*);
void leveldb_options_set_block_size(leveldb_options_t*, size_t);
void leveldb_options_set_block_restart_interval(leveldb_options_t*, int);
void leveldb_options_set_max_file_size(leveldb_options_t*, size_t);
void leveldb_options_set_compression(leveldb_options_t*, int);
leveldb_comparator_t* leveldb_comparator_create(void* state, void (*destructor)(void*), int (*compare)(void*, const char* a, size_t alen, const char* b, size_t blen), const char* (*name)(void*));
void leveldb_comparator_destroy(leveldb_comparator_t*);
void leveldb_filterpolicy_destroy(leveldb_filterpolicy_t*);
leveldb_filterpolicy_t* leveldb_filterpolicy_create_bloom(int bits_per_key);
leveldb_readoptions_t* leveldb_readoptions_create(void);
void leveldb_readoptions_destroy(leveldb_readoptions_t*);
void leveldb_readoptions_set_verify_checksums(leveldb_readoptions_t*, uint8_t);
void leveldb_readoptions_set_fill_cache(leveldb_readoptions_t*, uint8_t);
void leveldb_readoptions_set_snapshot(leveldb_readoptions_t*, const leveldb_snapshot_t*);
leveldb_writeoptions_t* leveldb_writeoptions_create(void);
void leveldb_writeoptions_destroy(leveldb_writeoptions_t*);
void leveldb_writeoptions_set_sync(leveldb_writeoptions_t*, uint8_t);
leveldb_cache_t* leveldb_cache_create_lru(size_t capacity);
void leveldb_cache_destroy(leveldb_cache_t* cache);
void leveldb_free(void* ptr);
int leveldb_major_version(void);
int leveldb_minor_version(void);

#ifdef __cplusplus
}
#endif
#endif
