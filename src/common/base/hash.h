/*
 * hs_hash_bytes: the string hash of the open-addressing tables that intern strings (the
 * profile's string table, the label sets, the dumps' symbol cache). Shared by the library
 * and the CLI; header-only.
 */
#ifndef HS_HASH_H
#define HS_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over s[0..n), its high bits folded into the low ones, which the tables index by. */
static inline uint64_t hs_hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

#endif
