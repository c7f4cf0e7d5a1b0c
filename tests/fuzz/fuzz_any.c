/*
 * libFuzzer target of hs_profile_parse_any (readers.c): gzip inflation, format detection
 * and dispatch to every reader.
 */
#include "readers/readers.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hs_profile_t *p = NULL;
    char err[256];
    if (hs_profile_parse_any(data, size, &p, err, sizeof(err)) == 0)
        hs_profile_free(p);
    return 0;
}
