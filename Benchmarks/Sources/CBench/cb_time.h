#ifndef KVDOCS_CB_TIME_H
#define KVDOCS_CB_TIME_H
// The clock every C baseline times with (private to CBench).
#include <time.h>

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
