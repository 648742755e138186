/* LD_PRELOAD heap-allocation counter for scripts/bench-percall.sh.
 * Counts malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc,
 * valloc and pvalloc calls (operator new goes through malloc) and prints the
 * total at exit to stderr as "malloc_count: N".
 *   gcc -O2 -shared -fPIC scripts/malloc_count.c -o build/malloc_count.so
 *   LD_PRELOAD=build/malloc_count.so ./program
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static atomic_ulong count;

void *malloc(size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_memalign(a, n); }
void *valloc(size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_valloc(n); }
void *pvalloc(size_t n) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); return __libc_pvalloc(n); }
int posix_memalign(void **out, size_t a, size_t n) {
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    void *p = __libc_memalign(a, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "malloc_count: %lu\n", (unsigned long)atomic_load(&count));
}
