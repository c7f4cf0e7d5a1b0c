/*
 * label_sums: our own reader's view of a profile's sample labels, for
 * tests/integration/labels.sh. Reads a pprof file with heapsift's decoder and, over the
 * samples whose stack has a frame of function FOCUS, sums each sample type per value of
 * each KEY ("-" for samples without that key). Prints one line per (key, value), sorted:
 *   label KEY VALUE INUSE_OBJECTS INUSE_SPACE ALLOC_OBJECTS ALLOC_SPACE
 * Usage: label_sums FILE FOCUS KEY... Built by the test (cc), not by CMake.
 */
#include "model/pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char key[256], value[256];
    long long v[4];
} row_t;

static row_t rows[100000];
static size_t nrows;

static bool has_frame(const hs_profile_t *p, const hs_sample_t *s, const char *focus)
{
    for (size_t i = 0; i < s->nlocs; i++) {
        const hs_location_t *l = hs_profile_location(p, s->location_ids[i]);
        for (size_t k = 0; l && k < l->nlines; k++) {
            const hs_function_t *f = hs_profile_function(p, l->lines[k].function_id);
            if (f && strcmp(hs_profile_get_str(p, f->name), focus) == 0)
                return true;
        }
    }
    return false;
}

static row_t *row(const char *key, const char *value)
{
    for (size_t i = 0; i < nrows; i++)
        if (strcmp(rows[i].key, key) == 0 && strcmp(rows[i].value, value) == 0)
            return &rows[i];
    if (nrows == sizeof(rows) / sizeof(rows[0]))
        exit(3);
    row_t *r = &rows[nrows++];
    snprintf(r->key, sizeof(r->key), "%s", key);
    snprintf(r->value, sizeof(r->value), "%s", value);
    return r;
}

/* The file at path, gunzipped if need be, through the decoder alone: the command's
 * reader (readers.c) would drag every other format's code into this build. */
static int read_pprof(const char *path, hs_profile_t **out, char *err, size_t errlen)
{
    hs_buf_t raw = HS_BUF_INIT, plain = HS_BUF_INIT;
    char why[200] = "";
    *out = NULL;
    int rc = hs_read_file(path, &raw);
    if (rc)
        snprintf(why, sizeof(why), "%s", strerror(-rc));
    else
        rc = hs_gunzip_auto(raw.data, raw.len, &plain, why, sizeof(why));
    if (!rc)
        rc = hs_pprof_decode(plain.data, plain.len, out, why, sizeof(why));
    if (rc)
        snprintf(err, errlen, "%s: %s", path, why);
    hs_buf_free(&raw);
    hs_buf_free(&plain);
    return rc;
}

static int row_cmp(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->value, y->value);
}

int main(int argc, char **argv)
{
    hs_profile_t *p;
    char err[512];
    int idx[4];
    static const char *const types[4] = {"inuse_objects", "inuse_space", "alloc_objects",
                                         "alloc_space"};
    if (argc < 4) {
        fprintf(stderr, "usage: label_sums FILE FOCUS KEY...\n");
        return 1;
    }
    if (read_pprof(argv[1], &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "label_sums: %s\n", err);
        return 2;
    }
    for (int t = 0; t < 4; t++)
        if ((idx[t] = hs_profile_sample_type_index(p, types[t])) < 0)
            return 2;
    for (size_t i = 0; i < p->nsamples; i++) {
        const hs_sample_t *s = &p->samples[i];
        if (!has_frame(p, s, argv[2]))
            continue;
        for (int k = 3; k < argc; k++) {
            const char *value = "-";
            for (size_t l = 0; l < s->nlabels; l++)
                if (strcmp(hs_profile_get_str(p, s->labels[l].key), argv[k]) == 0)
                    value = hs_profile_get_str(p, s->labels[l].str);
            row_t *r = row(argv[k], value);
            for (int t = 0; t < 4; t++)
                r->v[t] += s->values[idx[t]];
        }
    }
    qsort(rows, nrows, sizeof(rows[0]), row_cmp);
    for (size_t i = 0; i < nrows; i++)
        printf("label %s %s %lld %lld %lld %lld\n", rows[i].key, rows[i].value, rows[i].v[0],
               rows[i].v[1], rows[i].v[2], rows[i].v[3]);
    hs_profile_free(p);
    return 0;
}
