#include "cbench.h"
#include "cb_db.h"
#include "cb_time.h"
#include "cb_leveldb.h"
#include <stdlib.h>
#include <string.h>

static int compare(const char *k, size_t kl, const char *b, size_t bl) {
    int c = memcmp(k, b, kl < bl ? kl : bl);
    return c ? c : (kl < bl ? -1 : (kl > bl));
}

/* Whether key k is below the end b (at or below it when included; no end when bl is 0). */
static int below_end(const char *k, size_t kl, const char *b, size_t bl, int included) {
    if (bl == 0) return 1;
    int c = compare(k, kl, b, bl);
    return included ? c <= 0 : c < 0;
}

/* Touches every byte a reader would hand on: the key's and value's first bytes. */
static size_t touch(leveldb_iterator_t *it) {
    size_t kl, vl;
    const char *k = leveldb_iter_key(it, &kl);
    const char *v = leveldb_iter_value(it, &vl);
    return kl + vl + (size_t)(kl && vl && k[0] + v[0] > 1000);
}

double cb_floor_run(cb_db *d, cb_program p, int first, int count, cb_floor_stats *stats, char **error) {
    *error = NULL;
    leveldb_writebatch_t *batch = leveldb_writebatch_create();
    leveldb_iterator_t *it = NULL;
    size_t touched = 0;
    cb_floor_stats s = {0, 0, 0, 0};
    double t0 = now();
    for (int u = first; u < first + count && !*error; u++) {
        for (int32_t i = p.unit_starts[u]; i < p.unit_starts[u + 1] && !*error; i++) {
            const char *a = p.bytes + p.a_offset[i], *b = p.bytes + p.b_offset[i];
            size_t al = p.a_length[i], bl = p.b_length[i];
            int included = p.flags[i] & CB_UPPER_INCLUDED;
            switch (p.kind[i]) {
            case CB_GET: {
                size_t vl = 0;
                char *v = leveldb_get(d->db, d->read, a, al, &vl, error);
                s.gets++;
                if (v) { s.found++; leveldb_free(v); }
                break;
            }
            case CB_PUT: leveldb_writebatch_put(batch, a, al, b, bl); break;
            case CB_DELETE: leveldb_writebatch_delete(batch, a, al); break;
            case CB_WRITE:
                leveldb_write(d->db, d->write, batch, error);
                leveldb_writebatch_clear(batch);
                s.writes++;
                break;
            case CB_SCAN:
            case CB_SCAN_SAME:
                if (p.kind[i] == CB_SCAN || !it) {
                    if (it) leveldb_iter_destroy(it);
                    it = leveldb_create_iterator(d->db, d->read);
                }
                leveldb_iter_seek(it, a, al);
                if ((p.flags[i] & CB_LOWER_EXCLUDED) && leveldb_iter_valid(it)) {
                    size_t kl;
                    const char *k = leveldb_iter_key(it, &kl);
                    if (compare(k, kl, a, al) == 0) leveldb_iter_next(it);
                }
                for (int32_t n = 0; (p.limit[i] < 0 || n < p.limit[i]) && leveldb_iter_valid(it); n++) {
                    size_t kl;
                    const char *k = leveldb_iter_key(it, &kl);
                    if (!below_end(k, kl, b, bl, included)) break;
                    touched += touch(it);
                    s.entries++;
                    leveldb_iter_next(it);
                }
                leveldb_iter_get_error(it, error);
                break;
            case CB_SCAN_REVERSE:
                if (it) leveldb_iter_destroy(it);
                it = leveldb_create_iterator(d->db, d->read);
                if (bl == 0) {
                    leveldb_iter_seek_to_last(it);
                } else {
                    leveldb_iter_seek(it, b, bl);
                    if (!leveldb_iter_valid(it)) {
                        leveldb_iter_seek_to_last(it);
                    } else {
                        size_t kl;
                        const char *k = leveldb_iter_key(it, &kl);
                        if (!below_end(k, kl, b, bl, included)) leveldb_iter_prev(it);
                    }
                }
                for (int32_t n = 0; (p.limit[i] < 0 || n < p.limit[i]) && leveldb_iter_valid(it); n++) {
                    size_t kl;
                    const char *k = leveldb_iter_key(it, &kl);
                    int c = compare(k, kl, a, al);
                    if (c < 0 || (c == 0 && (p.flags[i] & CB_LOWER_EXCLUDED))) break;
                    touched += touch(it);
                    s.entries++;
                    leveldb_iter_prev(it);
                }
                leveldb_iter_get_error(it, error);
                break;
            }
        }
        if (it) { leveldb_iter_destroy(it); it = NULL; }
    }
    double elapsed = now() - t0;
    if (it) leveldb_iter_destroy(it);
    leveldb_writebatch_destroy(batch);
    stats->gets += s.gets; stats->found += s.found; stats->entries += s.entries + (long)(touched == (size_t)-1);
    stats->writes += s.writes;
    return *error ? -1 : elapsed;
}
