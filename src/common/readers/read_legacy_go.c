/*
 * What pprof does to Go's ?debug=1 heap text after it has symbolized it, done here from
 * the `#` frame comments alone (read_legacy.c calls it once the records are read): the
 * root frame that Go leaves unnamed is runtime.goexit (printStackRecord hides exactly that
 * one once it shows a frame), and the allocator's runtime frames are pruned as pprof's
 * Profile.Prune does with the legacy drop/keep expressions: from the root, past the
 * runtime frames before the first user frame, cut at the first frame that matches
 * (dropframes.c). Pure: no I/O, no globals; POSIX extended expressions stand for RE2 (the
 * patterns use only alternation, groups, classes, `.*` and `?`).
 */
#include "model/dropframes.h"
#include "read_legacy.h"

#include <errno.h>
#include <stdlib.h>

/* Names the unnamed root of every stack that has a named frame runtime.goexit. */
static int lgo_name_goexit(hs_profile_t *p)
{
    uint64_t fid = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const hs_sample_t *s = &p->samples[i];
        if (s->nlocs < 2)
            continue;
        hs_location_t *root = &p->locations[s->location_ids[s->nlocs - 1] - 1];
        if (root->nlines || !p->locations[s->location_ids[0] - 1].nlines)
            continue;
        if (!fid && !(fid = hs_profile_add_function(p, "runtime.goexit", "runtime.goexit", "", 0)))
            return -ENOMEM;
        if (!(root->lines = calloc(1, sizeof(*root->lines))))
            return -ENOMEM;
        root->lines[0].function_id = fid;
        root->nlines = 1;
    }
    return 0;
}

int hs_legacy_go_finish(hs_profile_t *p)
{
    int rc = lgo_name_goexit(p);
    return rc ? rc : hs_dropframes_apply(p, hs_legacy_alloc_drop_rx, hs_legacy_alloc_keep_rx);
}
