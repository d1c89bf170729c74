#include "cbench.h"
#include "cb_db.h"
#include "cb_time.h"
#include "cb_leveldb.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

cb_db *cb_open(const char *path, cb_options o, char **error) {
    cb_db *d = calloc(1, sizeof(cb_db));
    if (!d) return NULL;
    d->options = leveldb_options_create();
    leveldb_options_set_create_if_missing(d->options, 1);
    if (o.write_buffer_size) leveldb_options_set_write_buffer_size(d->options, o.write_buffer_size);
    if (o.block_size) leveldb_options_set_block_size(d->options, o.block_size);
    if (o.cache_capacity) {
        d->cache = leveldb_cache_create_lru(o.cache_capacity);
        leveldb_options_set_cache(d->options, d->cache);
    }
    if (o.bloom_bits) {
        d->policy = leveldb_filterpolicy_create_bloom(o.bloom_bits);
        leveldb_options_set_filter_policy(d->options, d->policy);
    }
    leveldb_options_set_compression(d->options, o.compression ? leveldb_snappy_compression : leveldb_no_compression);
    /* KVDocs' defaults, so the raw section compares the same work: paranoid checks, and
       checksums verified on reads (the tuning section measures what they cost). */
    leveldb_options_set_paranoid_checks(d->options, 1);
    *error = NULL;
    d->db = leveldb_open(d->options, path, error);
    d->read = leveldb_readoptions_create();
    leveldb_readoptions_set_verify_checksums(d->read, 1);
    d->write = leveldb_writeoptions_create();
    d->write_sync = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(d->write_sync, 1);
    if (*error) {
        cb_close(d);
        return NULL;
    }
    return d;
}

void cb_close(cb_db *d) {
    if (!d) return;
    if (d->db) leveldb_close(d->db);
    leveldb_options_destroy(d->options);
    if (d->cache) leveldb_cache_destroy(d->cache);
    if (d->policy) leveldb_filterpolicy_destroy(d->policy);
    leveldb_readoptions_destroy(d->read);
    leveldb_writeoptions_destroy(d->write);
    leveldb_writeoptions_destroy(d->write_sync);
    free(d);
}

double cb_fill(cb_db *d, const char *keys, const int32_t *order, int n, const char *values, size_t values_len,
               int vsize, int batch, int sync, char **error) {
    *error = NULL;
    leveldb_writeoptions_t *wo = sync ? d->write_sync : d->write;
    size_t span = values_len - (size_t)vsize;
    double start = now();
    if (batch <= 1) {
        for (int i = 0; i < n; i++) {
            int k = order ? order[i] : i;
            leveldb_put(d->db, wo, keys + (size_t)k * 16, 16, values + ((size_t)i * 97) % span, (size_t)vsize, error);
            if (*error) return -1;
        }
    } else {
        leveldb_writebatch_t *b = leveldb_writebatch_create();
        for (int i = 0; i < n; i++) {
            int k = order ? order[i] : i;
            leveldb_writebatch_put(b, keys + (size_t)k * 16, 16, values + ((size_t)i * 97) % span, (size_t)vsize);
            if ((i + 1) % batch == 0 || i == n - 1) {
                leveldb_write(d->db, wo, b, error);
                leveldb_writebatch_clear(b);
                if (*error) { leveldb_writebatch_destroy(b); return -1; }
            }
        }
        leveldb_writebatch_destroy(b);
    }
    return now() - start;
}

double cb_read_random(cb_db *d, const char *keys, const int32_t *order, int n, int *found, char **error) {
    *error = NULL;
    int hits = 0;
    double start = now();
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *v = leveldb_get(d->db, d->read, keys + (size_t)order[i] * 16, 16, &len, error);
        if (*error) return -1;
        if (v) { hits++; leveldb_free(v); }
    }
    double elapsed = now() - start;
    *found = hits;
    return elapsed;
}

double cb_read_seq(cb_db *d, int reverse, int *count, char **error) {
    *error = NULL;
    int c = 0;
    size_t bytes = 0;
    double start = now();
    leveldb_iterator_t *it = leveldb_create_iterator(d->db, d->read);
    if (reverse) leveldb_iter_seek_to_last(it); else leveldb_iter_seek_to_first(it);
    while (leveldb_iter_valid(it)) {
        size_t kl, vl;
        const char *k = leveldb_iter_key(it, &kl);
        const char *v = leveldb_iter_value(it, &vl);
        bytes += kl + vl + (size_t)(k[0] + v[0] > 1000);
        c++;
        if (reverse) leveldb_iter_prev(it); else leveldb_iter_next(it);
    }
    leveldb_iter_get_error(it, error);
    leveldb_iter_destroy(it);
    double elapsed = now() - start;
    *count = c + (int)(bytes == 0);
    return *error ? -1 : elapsed;
}

double cb_seek_random(cb_db *d, const char *keys, const int32_t *order, int n, int *found, char **error) {
    *error = NULL;
    int hits = 0;
    double start = now();
    leveldb_iterator_t *it = leveldb_create_iterator(d->db, d->read);
    for (int i = 0; i < n; i++) {
        const char *key = keys + (size_t)order[i] * 16;
        leveldb_iter_seek(it, key, 16);
        if (leveldb_iter_valid(it)) {
            size_t kl, vl;
            const char *k = leveldb_iter_key(it, &kl);
            (void)leveldb_iter_value(it, &vl);
            if (kl == 16 && memcmp(k, key, 16) == 0) hits++;
        }
    }
    leveldb_iter_get_error(it, error);
    leveldb_iter_destroy(it);
    double elapsed = now() - start;
    *found = hits;
    return *error ? -1 : elapsed;
}

double cb_compact(cb_db *d) {
    double start = now();
    leveldb_compact_range(d->db, NULL, 0, NULL, 0);
    return now() - start;
}

int cb_level0_files(cb_db *d) {
    char *v = leveldb_property_value(d->db, "leveldb.num-files-at-level0");
    if (!v) return -1;
    int n = atoi(v);
    leveldb_free(v);
    return n;
}

double cb_index_floor(cb_db *d, const char *starts, const size_t *start_lens, int queries, int limit,
                      const char *doc_keys, const size_t *doc_lens, int seek_docs, int *entries, char **error) {
    *error = NULL;
    *entries = 0;
    double t0 = now();
    const char *start = starts, *doc = doc_keys;
    for (int q = 0; q < queries; q++) {
        if (start_lens[q] == 0) goto gets;  /* no index: the gets alone */
        leveldb_iterator_t *it = leveldb_create_iterator(d->db, d->read);
        leveldb_iter_seek(it, start, start_lens[q]);
        for (int i = 0; i < limit && leveldb_iter_valid(it); i++) {
            size_t klen, vlen;
            const char *k = leveldb_iter_key(it, &klen);
            const char *v = leveldb_iter_value(it, &vlen);
            (void)k; (void)v; (void)klen; (void)vlen;
            (*entries)++;
            leveldb_iter_next(it);
        }
        leveldb_iter_get_error(it, error);
        leveldb_iter_destroy(it);
        if (*error) return -1;
    gets:
        start += start_lens[q];
        if (seek_docs) {
            /* The documents in key order through one iterator: a step when the next key
               is the next entry, else a seek. */
            leveldb_iterator_t *docs = leveldb_create_iterator(d->db, d->read);
            for (int i = 0; i < limit; i++) {
                size_t n = doc_lens[q * limit + i], klen = 0, vlen = 0;
                if (n == 0) continue;
                int found = 0;
                if (leveldb_iter_valid(docs)) {
                    leveldb_iter_next(docs);
                    if (leveldb_iter_valid(docs)) {
                        const char *k = leveldb_iter_key(docs, &klen);
                        found = klen == n && memcmp(k, doc, n) == 0;
                    }
                }
                if (!found) leveldb_iter_seek(docs, doc, n);
                if (leveldb_iter_valid(docs)) (void)leveldb_iter_value(docs, &vlen);
                doc += n;
            }
            leveldb_iter_get_error(docs, error);
            leveldb_iter_destroy(docs);
            if (*error) return -1;
            continue;
        }
        for (int i = 0; i < limit; i++) {
            size_t n = doc_lens[q * limit + i], vlen = 0;
            if (n == 0) continue;
            char *value = leveldb_get(d->db, d->read, doc, n, &vlen, error);
            if (*error) return -1;
            leveldb_free(value);
            doc += n;
        }
    }
    return now() - t0;
}
