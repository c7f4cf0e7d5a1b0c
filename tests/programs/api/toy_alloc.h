/*
 * toy_alloc.h: a small allocator of the test programs' own, over a static arena, that
 * never calls malloc: power-of-two classes with a free list each (so freed addresses come
 * back, as in a real allocator: a sample must be forgotten before its address is reused),
 * and blocks aligned beyond 16 bytes taken from the arena without reuse. It stands for an
 * allocator linked into the executable (tikv-jemallocator's _rjem_*, Rust's mimalloc
 * crate) where Debian ships no static archive. One thread.
 */
#ifndef TOY_ALLOC_H
#define TOY_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TOY_ARENA (96u << 20)
#define TOY_HDR 16

static _Alignas(4096) unsigned char toy_arena[TOY_ARENA];
static size_t toy_used;
static void *toy_lists[40];

/* Block header: its class (0: not reused) and its usable size. */
typedef struct {
    uint32_t cls;
    uint32_t pad;
    uint64_t usable;
} toy_hdr_t;

static void *toy_bump(size_t align, size_t total)
{
    size_t start = (toy_used + TOY_HDR + align - 1) & ~(align - 1);
    if (start + total > TOY_ARENA)
        return NULL;
    toy_used = start + total;
    return toy_arena + start;
}

static void *toy_alloc(size_t n, size_t align, int zero)
{
    toy_hdr_t *h;
    unsigned char *p;
    if (align <= TOY_HDR) {
        uint32_t c = 5;
        while (((size_t)1 << c) < n + TOY_HDR)
            c++;
        if (c >= 40)
            return NULL;
        p = toy_lists[c];
        if (p)
            memcpy(&toy_lists[c], p, sizeof(void *));
        else if ((p = toy_bump(TOY_HDR, (size_t)1 << c)) != NULL)
            p += TOY_HDR;
        if (!p)
            return NULL;
        h = (toy_hdr_t *)(void *)(p - TOY_HDR);
        h->cls = c;
        h->usable = ((size_t)1 << c) - TOY_HDR;
    } else {
        if ((p = toy_bump(align, n)) == NULL)
            return NULL;
        h = (toy_hdr_t *)(void *)(p - TOY_HDR);
        h->cls = 0;
        h->usable = n;
    }
    if (zero)
        memset(p, 0, n);
    else
        memset(p, 0xa5, n); /* a block handed out again is not zero by luck */
    return p;
}

static void toy_free(void *p)
{
    if (!p)
        return;
    toy_hdr_t *h = (toy_hdr_t *)(void *)((unsigned char *)p - TOY_HDR);
    if (h->cls) {
        memcpy(p, &toy_lists[h->cls], sizeof(void *));
        toy_lists[h->cls] = p;
    }
}

static size_t toy_usable(void *p)
{
    return ((toy_hdr_t *)(void *)((unsigned char *)p - TOY_HDR))->usable;
}

static void *toy_realloc(void *p, size_t n, size_t align)
{
    if (p && n <= toy_usable(p))
        return p;
    void *q = toy_alloc(n, align, 0);
    if (q && p) {
        memcpy(q, p, toy_usable(p) < n ? toy_usable(p) : n);
        toy_free(p);
    }
    return q;
}

#endif
