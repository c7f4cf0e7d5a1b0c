/*
 * libFuzzer target of the legacy text heap profile reader (read_legacy.c): any input
 * must parse or fail cleanly, and a parsed profile must encode.
 */
#include "model/pprof.h"
#include "readers/read_legacy.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hs_profile_t *p = NULL;
    char err[256];
    if (hs_legacy_parse(data, size, &p, err, sizeof(err)) == 0) {
        hs_buf_t b = HS_BUF_INIT;
        hs_pprof_encode(p, &b);
        hs_buf_free(&b);
        hs_profile_free(p);
    }
    return 0;
}
