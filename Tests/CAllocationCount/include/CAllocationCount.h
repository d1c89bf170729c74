#ifndef KVDOCS_CALLOCATIONCOUNT_H
#define KVDOCS_CALLOCATIONCOUNT_H
// Counts the heap allocations each thread makes, for kvbench's allocations per document
// and the tests that bound them. Linked into an executable, this target's malloc, calloc,
// realloc and aligned allocators take the place of the C library's (a program's own
// definitions come first in the dynamic linker's search), count the call in a thread-local
// counter and forward to glibc's own entry points (__libc_malloc, …); free stays glibc's.
// Under a sanitizer, which brings its own allocator, nothing is replaced and
// kv_allocations_counted() is false.
#include <stdbool.h>
#include <stdint.h>

/// Whether this build counts allocations (false under a sanitizer or off glibc).
bool kv_allocations_counted(void);

/// The allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) the
/// calling thread has made since it started; 0 when they are not counted.
uint64_t kv_allocations(void);

#endif
