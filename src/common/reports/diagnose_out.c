/*
 * The diagnosis' model and its two outputs (diagnose.h): appending findings and notes,
 * ordering findings largest first, the text page and the JSON contract of
 * docs/diagnose.md (strings escaped per RFC 8259, invalid UTF-8 replaced by U+FFFD so a
 * parser never refuses the document). Writes only to the FILE it is given; owns the
 * findings' strings.
 */
#define _GNU_SOURCE
#include "diagnose.h"
#include "base/sort.h"
#include "base/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const diag_kinds[] = {"fragmentation", "growth",     "leak",
                                         "not_heap",      "blind_spot", "top_site"};

const char *hs_diag_kind_name(hs_diag_kind_t k)
{
    return (unsigned)k < sizeof(diag_kinds) / sizeof(diag_kinds[0]) ? diag_kinds[k] : "?";
}

static char *diag_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int hs_diagnosis_add(hs_diagnosis_t *d, hs_diag_kind_t kind, int64_t bytes, const char *site,
                     const char *evidence, const char *advice)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        hs_diag_finding_t *f = realloc(d->f, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        d->f = f;
        d->cap = cap;
    }
    hs_diag_finding_t *x = &d->f[d->n];
    x->kind = kind;
    x->bytes = bytes < 0 ? 0 : bytes;
    x->site = diag_dup(site);
    x->evidence = diag_dup(evidence ? evidence : "");
    x->advice = diag_dup(advice ? advice : "");
    if ((site && !x->site) || !x->evidence || !x->advice) {
        free(x->site);
        free(x->evidence);
        free(x->advice);
        return -ENOMEM;
    }
    d->n++;
    return 0;
}

int hs_diagnosis_note(hs_diagnosis_t *d, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&s, fmt, ap);
    va_end(ap);
    char **v = len < 0 ? NULL : realloc(d->notes, (d->nnotes + 1) * sizeof(char *));
    if (!v) {
        if (len >= 0)
            free(s);
        return -ENOMEM;
    }
    d->notes = v;
    d->notes[d->nnotes++] = s;
    return 0;
}

void hs_diagnosis_free(hs_diagnosis_t *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->f[i].site);
        free(d->f[i].evidence);
        free(d->f[i].advice);
    }
    for (size_t i = 0; i < d->nnotes; i++)
        free(d->notes[i]);
    free(d->f);
    free(d->notes);
    memset(d, 0, sizeof(*d));
}

static int diag_cmp(const void *a, const void *b)
{
    const hs_diag_finding_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->site ? x->site : "", y->site ? y->site : "");
}

void hs_diagnosis_sort(hs_diagnosis_t *d)
{
    hs_sort(d->f, d->n, sizeof(*d->f), diag_cmp);
}

/* s as a JSON string (null for NULL). */
static void diag_json_str(const char *s, FILE *out)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t u = *p >= 0x80 ? hs_utf8_seq(p, strnlen((const char *)p, 4)) : 0;
        if (u) {
            fwrite(p, 1, u, out);
            p += u;
        } else if (*p >= 0x80) {
            fputs("\xef\xbf\xbd", out);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p++, out);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p++);
        } else {
            fputc(*p++, out);
        }
    }
    fputc('"', out);
}

int hs_diagnosis_write_json(const hs_diagnosis_t *d, const char *target, FILE *out)
{
    fputs("{\"target\": ", out);
    diag_json_str(target, out);
    if (d->rss_bytes >= 0)
        fprintf(out, ", \"rss_bytes\": %" PRId64, d->rss_bytes);
    else
        fputs(", \"rss_bytes\": null", out);
    fputs(", \"allocator\": ", out);
    diag_json_str(d->allocator ? d->allocator : "unknown", out);
    fputs(", \"findings\": [", out);
    for (size_t i = 0; i < d->n; i++) {
        const hs_diag_finding_t *x = &d->f[i];
        fprintf(out, "%s\n  {\"kind\": \"%s\", \"bytes\": %" PRId64 ", \"site\": ", i ? "," : "",
                hs_diag_kind_name(x->kind), x->bytes);
        diag_json_str(x->site, out);
        fputs(", \"evidence\": ", out);
        diag_json_str(x->evidence, out);
        fputs(", \"advice\": ", out);
        diag_json_str(x->advice, out);
        fputc('}', out);
    }
    fputs(d->n ? "\n ], \"notes\": [" : "], \"notes\": [", out);
    for (size_t i = 0; i < d->nnotes; i++) {
        fputs(i ? ", " : "", out);
        diag_json_str(d->notes[i], out);
    }
    fputs("]}\n", out);
    return ferror(out) ? -EIO : 0;
}

/* bytes as "151.19 MB" (decimal units, as the evidence strings have them). */
static void diag_mb(char *s, size_t len, int64_t b)
{
    if (b >= 1000000)
        snprintf(s, len, "%.2f MB", (double)b / 1e6);
    else if (b >= 1000)
        snprintf(s, len, "%.1f kB", (double)b / 1e3);
    else
        snprintf(s, len, "%" PRId64 " B", b);
}

int hs_diagnosis_write_text(const hs_diagnosis_t *d, const char *target, FILE *out)
{
    char b[32];
    fprintf(out, "Diagnosis of %s", target);
    if (d->rss_bytes >= 0) {
        diag_mb(b, sizeof(b), d->rss_bytes);
        fprintf(out, ": RSS %s", b);
    }
    fprintf(out, ", allocator %s\n", d->allocator ? d->allocator : "unknown");
    if (d->n == 0)
        fputs("\nNo finding: nothing in these profiles stands out.\n", out);
    for (size_t i = 0; i < d->n; i++) {
        const hs_diag_finding_t *x = &d->f[i];
        diag_mb(b, sizeof(b), x->bytes);
        fprintf(out, "\n%zu. %s  %s", i + 1, hs_diag_kind_name(x->kind), b);
        if (x->site)
            fprintf(out, "  %s", x->site);
        fprintf(out, "\n   evidence: %s\n", x->evidence);
        if (x->advice[0])
            fprintf(out, "   advice:   %s\n", x->advice);
    }
    if (d->nnotes)
        fputs("\nNotes:\n", out);
    for (size_t i = 0; i < d->nnotes; i++)
        fprintf(out, "  - %s\n", d->notes[i]);
    return ferror(out) ? -EIO : 0;
}
