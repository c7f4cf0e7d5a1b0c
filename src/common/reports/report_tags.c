/*
 * Sample labels in the report model (report.h), the way `go tool pprof` treats them: which
 * label is a string and which a number (profile decoding), the unit of each numeric key
 * (Profile.NumLabelUnits), the -tagfocus/-tagignore filters (compileTagFilter and
 * parseTagFilterRange: string regexps, numeric values and ranges with units), and the -tags
 * listing (printTags, through a text/tabwriter aligned right). Owns only its allocations.
 */
#define _GNU_SOURCE
#include "report.h"
#include "base/satmath.h"
#include "base/sort.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

int hs_label_kind(const hs_label_t *l)
{
    if (l->str != 0)
        return HS_LABEL_STR;
    return l->num != 0 || l->num_unit != 0 ? HS_LABEL_NUM : HS_LABEL_NONE;
}

/* ---- numeric label units -------------------------------------------------------------- */

int hs_numunits_init(hs_numunits_t *u, const hs_profile_t *p)
{
    u->p = p;
    u->unit = malloc((p->nstrings ? p->nstrings : 1) * sizeof(int64_t));
    if (!u->unit)
        return -ENOMEM;
    for (size_t i = 0; i < p->nstrings; i++)
        u->unit[i] = -2;
    for (size_t i = 0; i < p->nsamples; i++) {
        const hs_sample_t *s = &p->samples[i];
        for (size_t j = 0; j < s->nlabels; j++) {
            const hs_label_t *l = &s->labels[j];
            if (hs_label_kind(l) != HS_LABEL_NUM || l->key < 0 || (size_t)l->key >= p->nstrings)
                continue;
            if (u->unit[l->key] < 0 && l->num_unit > 0 && *hs_profile_get_str(p, l->num_unit))
                u->unit[l->key] = l->num_unit; /* the first unit seen wins, as in pprof */
            else if (u->unit[l->key] == -2)
                u->unit[l->key] = -1;
        }
    }
    return 0;
}

void hs_numunits_free(hs_numunits_t *u)
{
    free(u->unit);
    u->unit = NULL;
}

const char *hs_numunits_get(const hs_numunits_t *u, int64_t key)
{
    const char *k = hs_profile_get_str(u->p, key);
    if (key >= 0 && (size_t)key < u->p->nstrings && u->unit[key] >= 0)
        return hs_profile_get_str(u->p, u->unit[key]);
    return strcmp(k, "alignment") == 0 || strcmp(k, "request") == 0 ? "bytes" : k;
}

/* ---- tag filters ------------------------------------------------------------------------ */

struct hs_tagfilter {
    char *key; /* NULL: any key */
    bool numeric;
    int op;        /* numeric: 0 ==, 1 >=, 2 <=, 3 between */
    double lo, hi; /* in unit */
    char unit[32]; /* the filter's unit after measurement.Scale ("" when none) */
    regex_t *re;   /* string: comma-separated regexps */
    size_t nre;
};

/* The next match of pprof's tagFilterRangeRx, ([+-]?[[:digit:]]+)([[:alpha:]]+)?, in s from
 * *pos: its start and end, the number and the unit. */
static bool tag_range_match(const char *s, size_t *pos, size_t *b, size_t *e, long long *num,
                            char *unit, size_t ulen)
{
    for (size_t i = *pos; s[i]; i++) {
        size_t j = i + (s[i] == '+' || s[i] == '-');
        if (s[j] < '0' || s[j] > '9')
            continue;
        while (s[j] >= '0' && s[j] <= '9')
            j++;
        char *end;
        errno = 0;
        *num = strtoll(s + i, &end, 10);
        if (errno)
            return false; /* pprof panics on an overflowing number; we take it as no range */
        size_t k = j;
        while ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z'))
            k++;
        snprintf(unit, ulen, "%.*s", (int)(k - j), s + j);
        *b = i;
        *e = *pos = k;
        return true;
    }
    return false;
}

/* parseTagFilterRange: true when value is a number or a range, filling f. */
static bool tag_parse_range(const char *v, hs_tagfilter_t *f)
{
    size_t pos = 0, b[2], e[2];
    long long n[2];
    char u[2][32];
    if (!tag_range_match(v, &pos, &b[0], &e[0], &n[0], u[0], sizeof(u[0])))
        return false;
    bool two = tag_range_match(v, &pos, &b[1], &e[1], &n[1], u[1], sizeof(u[1]));
    const char *unit = "";
    f->lo = hs_report_scale((double)n[0], u[0], u[0], &unit);
    snprintf(f->unit, sizeof(f->unit), "%s", unit);
    size_t len = strlen(v), m0 = e[0] - b[0];
    if (!two) {
        if (b[0] == 0 && e[0] == len)
            f->op = 0;
        else if (b[0] == 0 && len == m0 + 1 && v[m0] == ':')
            f->op = 1;
        else if (b[0] == 1 && v[0] == ':' && e[0] == len)
            f->op = 2;
        else
            return false;
        return true;
    }
    if (b[0] != 0 || v[e[0]] != ':' || b[1] != e[0] + 1 || e[1] != len)
        return false;
    const char *unit2 = "";
    f->hi = hs_report_scale((double)n[1], u[1], f->unit, &unit2);
    if (strcmp(unit2, f->unit) != 0)
        return false;
    f->op = 3;
    return true;
}

static int tag_compile_res(hs_tagfilter_t *f, const char *v, const char *name, char *err,
                           size_t errlen)
{
    size_t n = 1;
    for (const char *c = v; *c; c++)
        n += *c == ',';
    f->re = calloc(n, sizeof(regex_t));
    char *copy = strdup(v);
    int rc = f->re && copy ? 0 : -ENOMEM;
    char *tok = copy;
    for (size_t i = 0; !rc && i < n; i++) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        int rr = regcomp(&f->re[i], tok, REG_EXTENDED | REG_NOSUB);
        if (rr) {
            char msg[128];
            regerror(rr, &f->re[i], msg, sizeof(msg));
            snprintf(err, errlen, "bad --%s regular expression '%s': %s", name, tok, msg);
            rc = -EINVAL;
            break;
        }
        f->nre++;
        tok = comma ? comma + 1 : tok + strlen(tok);
    }
    free(copy);
    return rc;
}

int hs_tagfilter_compile(const char *spec, const char *name, hs_tagfilter_t **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    hs_tagfilter_t *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    const char *v = spec, *eq = strchr(spec, '=');
    if (eq) {
        if (eq > spec && !(f->key = strndup(spec, (size_t)(eq - spec)))) {
            free(f);
            return -ENOMEM;
        }
        v = eq + 1;
    }
    int rc = 0;
    f->numeric = tag_parse_range(v, f);
    if (!f->numeric)
        rc = tag_compile_res(f, v, name, err, errlen);
    if (rc) {
        hs_tagfilter_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void hs_tagfilter_free(hs_tagfilter_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nre; i++)
        regfree(&f->re[i]);
    free(f->re);
    free(f->key);
    free(f);
}

static bool tag_num_in(const hs_tagfilter_t *f, int64_t v, const char *unit)
{
    const char *su = "";
    double sv = hs_report_scale((double)v, unit, f->unit, &su);
    if (strcmp(su, f->unit) != 0)
        return false;
    switch (f->op) {
    case 0:
        return sv == f->lo;
    case 1:
        return sv >= f->lo;
    case 2:
        return sv <= f->lo;
    default:
        return sv >= f->lo && sv <= f->hi;
    }
}

static bool tag_re_any(const hs_tagfilter_t *f, const char *s)
{
    for (size_t i = 0; i < f->nre; i++)
        if (regexec(&f->re[i], s, 0, NULL, 0) == 0)
            return true;
    return false;
}

/* Unkeyed string filter: every regexp matches some "key:value" of the sample. */
static bool tag_match_any_key(const hs_tagfilter_t *f, const hs_profile_t *p, const hs_sample_t *s)
{
    for (size_t i = 0; i < f->nre; i++) {
        bool hit = false;
        for (size_t j = 0; j < s->nlabels && !hit; j++) {
            const hs_label_t *l = &s->labels[j];
            if (hs_label_kind(l) != HS_LABEL_STR)
                continue;
            const char *k = hs_profile_get_str(p, l->key), *v = hs_profile_get_str(p, l->str);
            size_t len = strlen(k) + strlen(v) + 2;
            char stackbuf[256], *kv = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
            if (!kv)
                return false;
            size_t kl = strlen(k);
            memcpy(kv, k, kl);
            kv[kl] = ':';
            memcpy(kv + kl + 1, v, len - kl - 1); /* v and its NUL */
            hit = regexec(&f->re[i], kv, 0, NULL, 0) == 0;
            if (kv != stackbuf)
                free(kv);
        }
        if (!hit)
            return false;
    }
    return true;
}

bool hs_tagfilter_match(const hs_tagfilter_t *f, const hs_numunits_t *u, const hs_sample_t *s)
{
    const hs_profile_t *p = u->p;
    if (!f->numeric && !f->key)
        return tag_match_any_key(f, p, s);
    for (size_t j = 0; j < s->nlabels; j++) {
        const hs_label_t *l = &s->labels[j];
        int kind = hs_label_kind(l);
        const char *k = hs_profile_get_str(p, l->key);
        if (f->key && strcmp(k, f->key) != 0)
            continue;
        if (f->numeric && kind == HS_LABEL_NUM && tag_num_in(f, l->num, hs_numunits_get(u, l->key)))
            return true;
        if (!f->numeric && kind == HS_LABEL_STR && tag_re_any(f, hs_profile_get_str(p, l->str)))
            return true;
    }
    return false;
}

/* ---- the -tags listing ------------------------------------------------------------------- */

typedef struct {
    const char *key;
    char *val;
    int64_t sum;
} tag_entry_t;

static int tag_cmp_kv(const void *a, const void *b)
{
    const tag_entry_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->val, y->val);
}

/* graph.SortTags(flat): |value| descending, then name. */
static int tag_cmp_flat(const void *a, const void *b)
{
    const tag_entry_t *x = a, *y = b;
    int64_t ax = x->sum < 0 ? -x->sum : x->sum, ay = y->sum < 0 ? -y->sum : y->sum;
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return strcmp(x->val, y->val);
}

/* Display width in runes, like text/tabwriter. */
static size_t tag_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* One key: "key:\t Total X" and " \tV (P%):\t value" lines, cells right-aligned to the
 * widest of the block plus one space, as printTags' tabwriter lays them out. */
static void tag_print_key(const hs_report_t *r, tag_entry_t *e, size_t n, const char *out_unit,
                          FILE *f)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total = hs_sat_add(total, e[i].sum);
    hs_sort(e, n, sizeof(*e), tag_cmp_flat);
    char(*cells)[96] = malloc(n * sizeof(*cells));
    if (!cells)
        return;
    size_t w0 = tag_width(e[0].key) + 1, w1 = 0; /* widest cells of the two columns */
    const char *u = "";
    for (size_t i = 0; i < n; i++) {
        double v = hs_report_scale((double)e[i].sum, r->sample_unit, out_unit, &u);
        char pct[32];
        hs_report_percent(pct, sizeof(pct), e[i].sum, total);
        if (total > 0)
            snprintf(cells[i], sizeof(cells[i]), "%.1f%s (%s):", v, u, pct);
        else
            snprintf(cells[i], sizeof(cells[i]), "%.1f%s:", v, u);
        if (tag_width(cells[i]) > w1)
            w1 = tag_width(cells[i]);
    }
    double tv = hs_report_scale((double)total, r->sample_unit, out_unit, &u);
    fprintf(f, " %s: Total %.1f%s\n", e[0].key, tv, u);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%*s%*s%s %s\n", (int)(w0 + 1), "", (int)(w1 + 1 - tag_width(cells[i])), "",
                cells[i], e[i].val);
    fputc('\n', f);
    free(cells);
}

/* Every (key, value) of the report's samples with the sample's value, numeric values
 * formatted like pprof's tag names. */
static long tag_collect(const hs_report_t *r, const char *out_unit, tag_entry_t **out)
{
    size_t n = 0, cap = 64;
    tag_entry_t *e = malloc(cap * sizeof(*e));
    for (size_t i = 0; e && i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        for (size_t j = 0; j < s->src->nlabels; j++) {
            const hs_label_t *l = &s->src->labels[j];
            int kind = hs_label_kind(l);
            if (kind == HS_LABEL_NONE)
                continue;
            if (n == cap) {
                tag_entry_t *a = realloc(e, (cap *= 2) * sizeof(*e));
                if (!a)
                    goto fail;
                e = a;
            }
            char v[64];
            if (kind == HS_LABEL_NUM)
                hs_report_label(v, sizeof(v), l->num, hs_report_num_unit(r, s->prof, l->key),
                                out_unit);
            e[n].key = hs_profile_get_str(s->prof, l->key);
            e[n].val = strdup(kind == HS_LABEL_STR ? hs_profile_get_str(s->prof, l->str) : v);
            e[n].sum = s->value;
            if (!e[n++].val)
                goto fail;
        }
    }
    if (!e)
        return -ENOMEM;
    *out = e;
    return (long)n;
fail:
    for (size_t i = 0; i < n; i++)
        free(e[i].val);
    free(e);
    return -ENOMEM;
}

int hs_report_print_tags(const hs_report_t *r, const char *out_unit, FILE *f)
{
    tag_entry_t *e = NULL;
    long n = tag_collect(r, out_unit, &e);
    if (n < 0)
        return (int)n;
    hs_sort(e, (size_t)n, sizeof(*e), tag_cmp_kv);
    size_t w = 0;
    for (size_t i = 0; i < (size_t)n; i++) { /* sum equal (key, value) pairs */
        if (w && tag_cmp_kv(&e[w - 1], &e[i]) == 0) {
            e[w - 1].sum = hs_sat_add(e[w - 1].sum, e[i].sum);
            free(e[i].val);
        } else {
            e[w++] = e[i];
        }
    }
    for (size_t b = 0, k; b < w; b = k) {
        for (k = b; k < w && strcmp(e[k].key, e[b].key) == 0;)
            k++;
        tag_print_key(r, e + b, k - b, out_unit, f);
    }
    for (size_t i = 0; i < w; i++)
        free(e[i].val);
    free(e);
    return 0;
}
