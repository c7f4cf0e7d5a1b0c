/*
 * `heapsift convert --to pprof|collapsed|legacy [-o OUT] FILE`: any profile heapsift
 * reads, written as a gzipped pprof protobuf (what Pyroscope, Parca and `go tool pprof`
 * read), as folded stacks (`root;...;leaf VALUE`, the input of flamegraph.pl and
 * speedscope) or as a gperftools-style text heap profile (`heap profile: ... @
 * heapprofile`, which jeprof and pprof read without unsampling again, since the values
 * written are already unsampled). Unsymbolized locations are symbolized from the local
 * binaries first, unless --no-symbolize (legacy output keeps addresses only).
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/satmath.h"
#include "kit/outfile.h"
#include "readers/readers.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef enum { CV_PPROF, CV_COLLAPSED, CV_LEGACY } cv_format_t;

typedef struct {
    cv_format_t to;
    const char *out, *path, *sample_type;
    bool symbolize, quiet;
} cv_opts_t;

static void cv_usage(FILE *f)
{
    fprintf(f, "usage: heapsift convert --to pprof|collapsed|legacy [-o OUT] FILE\n\n"
               "Converts any profile heapsift reads (pprof, gperftools, jemalloc heap_v2, Go\n"
               "debug=1 text; gzipped or not) into another format:\n"
               "  pprof      gzipped profile.proto, for go tool pprof, Pyroscope, Parca\n"
               "  collapsed  folded stacks 'root;...;leaf VALUE' for flamegraph.pl, speedscope\n"
               "  legacy     gperftools text heap profile (heapprofile), for jeprof and pprof\n\n"
               "options:\n"
               "  -o, --output OUT     write to OUT (default: standard output)\n"
               "  --sample-type TYPE   value of the collapsed stacks (default: the profile's)\n"
               "  --no-symbolize       do not look up names of unsymbolized frames\n"
               "  -q, --quiet          no warnings or progress while symbolizing\n");
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

/* Appends the folded name of one frame: function name, else the address in hex. */
static int cv_frame(hs_buf_t *b, const hs_profile_t *p, const hs_location_t *l, size_t line)
{
    if (l->nlines) {
        const hs_function_t *f = hs_profile_function(p, l->lines[line].function_id);
        const char *name = f ? hs_profile_get_str(p, f->name) : "";
        if (*name)
            return hs_buf_printf(b, "%s", name);
    }
    return hs_buf_printf(b, "0x%" PRIx64, l->address);
}

static int cv_collapsed(const hs_profile_t *p, int idx, hs_buf_t *b)
{
    int rc = 0;
    for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
        const hs_sample_t *s = &p->samples[i];
        if (s->values[idx] == 0)
            continue;
        bool first = true;
        for (size_t k = s->nlocs; k-- > 0 && rc == 0;) {
            const hs_location_t *l = hs_profile_location(p, s->location_ids[k]);
            if (!l)
                continue;
            size_t n = l->nlines ? l->nlines : 1;
            for (size_t j = n; j-- > 0 && rc == 0;) {
                if (!first)
                    rc = hs_buf_append(b, ";", 1);
                first = false;
                if (rc == 0)
                    rc = cv_frame(b, p, l, j);
            }
        }
        if (rc == 0)
            rc = hs_buf_printf(b, "%s%" PRId64 "\n", first ? "" : " ", s->values[idx]);
    }
    return rc;
}

/* The indices of inuse count/bytes and alloc count/bytes (-1 when absent). */
static bool cv_heap_types(const hs_profile_t *p, int t[4])
{
    t[0] = hs_profile_sample_type_index(p, "inuse_objects");
    t[1] = hs_profile_sample_type_index(p, "inuse_space");
    if (t[0] < 0 || t[1] < 0) {
        t[0] = hs_profile_sample_type_index(p, "objects");
        t[1] = hs_profile_sample_type_index(p, "space");
    }
    t[2] = hs_profile_sample_type_index(p, "alloc_objects");
    t[3] = hs_profile_sample_type_index(p, "alloc_space");
    if (t[2] < 0 || t[3] < 0)
        t[2] = t[0], t[3] = t[1];
    return t[0] >= 0 && t[1] >= 0;
}

static int cv_legacy_maps(const hs_profile_t *p, hs_buf_t *b)
{
    int rc = hs_buf_printf(b, "\nMAPPED_LIBRARIES:\n");
    for (size_t i = 0; i < p->nmappings && rc == 0; i++) {
        const hs_mapping_t *m = &p->mappings[i];
        const char *f = hs_profile_get_str(p, m->filename);
        if (m->memory_start >= m->memory_limit || m->memory_limit == UINT64_MAX)
            continue;
        rc = hs_buf_printf(b, "%08" PRIx64 "-%08" PRIx64 " r-xp %08" PRIx64 " 00:00 0 %s\n",
                           m->memory_start, m->memory_limit, m->file_offset, f);
    }
    return rc;
}

static int cv_legacy(const hs_profile_t *p, hs_buf_t *b)
{
    int t[4];
    if (!cv_heap_types(p, t))
        return -EINVAL;
    int64_t tot[4] = {0};
    for (size_t i = 0; i < p->nsamples; i++)
        for (int k = 0; k < 4; k++)
            tot[k] = hs_sat_add(tot[k], p->samples[i].values[t[k]]);
    int rc = hs_buf_printf(
        b, "heap profile: %" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @ heapprofile\n",
        tot[0], tot[1], tot[2], tot[3]);
    for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
        const hs_sample_t *s = &p->samples[i];
        const int64_t *v = s->values;
        rc = hs_buf_printf(b, "%" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @", v[t[0]],
                           v[t[1]], v[t[2]], v[t[3]]);
        for (size_t k = 0; k < s->nlocs && rc == 0; k++) {
            const hs_location_t *l = hs_profile_location(p, s->location_ids[k]);
            rc = hs_buf_printf(b, " 0x%" PRIx64, (l ? l->address : 0) + 1);
        }
        if (rc == 0)
            rc = hs_buf_append(b, "\n", 1);
    }
    return rc ? rc : cv_legacy_maps(p, b);
}

static int cv_parse(int argc, char **argv, cv_opts_t *o)
{
    static const struct option longs[] = {{"to", required_argument, NULL, 't'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"sample-type", required_argument, NULL, 's'},
                                          {"no-symbolize", no_argument, NULL, 'n'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *to = NULL;
    int c;
    o->symbolize = true;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:t:o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 't':
            to = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 's':
            o->sample_type = optarg;
            break;
        case 'n':
            o->symbolize = false;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            cv_usage(stdout);
            return 0;
        default:
            return hs_cli_bad_option("convert", c, argv);
        }
    }
    if (!to || optind != argc - 1) {
        hs_cli_error("convert: want --to FORMAT and one FILE (see heapsift convert --help)");
        return 1;
    }
    if (strcmp(to, "pprof") == 0)
        o->to = CV_PPROF;
    else if (strcmp(to, "collapsed") == 0)
        o->to = CV_COLLAPSED;
    else if (strcmp(to, "legacy") == 0)
        o->to = CV_LEGACY;
    else {
        hs_cli_error("convert: unknown format '%s' (pprof, collapsed or legacy)", to);
        return 1;
    }
    o->path = argv[optind];
    return -1;
}

/* The sample type index of the collapsed output, or -1 after an error. */
static int cv_sample_index(const hs_profile_t *p, const cv_opts_t *o)
{
    const char *want = o->sample_type;
    if (!want)
        want = p->default_sample_type ? hs_profile_get_str(p, p->default_sample_type) : NULL;
    int idx = want ? hs_profile_sample_type_index(p, want) : (int)p->ntypes - 1;
    if (idx < 0 && !o->sample_type && p->ntypes)
        idx = (int)p->ntypes - 1;
    if (idx < 0)
        hs_cli_error("%s: no sample type \"%s\" in this profile", o->path, want ? want : "");
    return idx;
}

static int cv_text(const hs_profile_t *p, const cv_opts_t *o)
{
    hs_buf_t b = HS_BUF_INIT;
    int rc;
    if (o->to == CV_COLLAPSED) {
        int idx = cv_sample_index(p, o);
        if (idx < 0)
            return 2;
        rc = cv_collapsed(p, idx, &b);
    } else {
        rc = cv_legacy(p, &b);
        if (rc == -EINVAL) {
            hs_cli_error("%s: legacy output needs heap sample types (inuse_objects and "
                         "inuse_space, or objects and space)",
                         o->path);
            return 2;
        }
    }
    if (rc) {
        hs_cli_error("convert: %s", strerror(-rc));
        rc = 3;
    } else {
        rc = hs_cli_write_out(&b, o->out, false);
    }
    hs_buf_free(&b);
    return rc;
}

int hs_cmd_convert(int argc, char **argv)
{
    cv_opts_t o = {0};
    hs_profile_t *p = NULL;
    int rc = cv_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if ((rc = hs_cli_read_profile(o.path, &p)))
        return rc;
    if (o.symbolize && o.to != CV_LEGACY && hs_profile_symbolize(p, o.quiet) < 0) {
        hs_cli_error("%s: symbolizing: out of memory", o.path);
        rc = 3;
    } else if (o.to == CV_PPROF) {
        rc = hs_cli_write_pprof(p, o.out);
    } else {
        rc = cv_text(p, &o);
    }
    hs_profile_free(p);
    return rc;
}
