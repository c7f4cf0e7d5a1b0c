/*
 * hs_sort: qsort for arrays that may be empty. qsort's array argument is declared never
 * NULL, and an empty array often is (nothing was allocated for it): passing it is
 * undefined, which UBSan reports (make test-sanitize) and which lets a compiler drop a
 * later NULL check of the same pointer. Shared by the library and the CLI.
 */
#ifndef HS_SORT_H
#define HS_SORT_H

#include <stdlib.h>

static inline void hs_sort(void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

#endif
