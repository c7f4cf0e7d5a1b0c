/*
 * Leak suppressions: LeakSanitizer's file format and template matching (see suppress.h
 * for the rules), plus heapsift's built-in list. The matcher reproduces LSan's
 * TemplateMatch piece by piece, so a pattern means here what it means to LSan, quirks
 * included: each piece is found leftmost, and `$` only checks that nothing is left after
 * the previous piece (or that a `*` came just before it).
 */
#define _GNU_SOURCE
#include "suppress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char hs_supp_builtin[] =
    "# stdio buffers: allocated on a stream's first use, never freed\n"
    "leak:_IO_file_doallocate\n"
    "# shared libraries' constructors, run by the dynamic linker: library-global state\n"
    "# such as libstdc++'s emergency exception pool\n"
    "leak:_dl_init\n"
    "# the dynamic linker's records of libraries loaded with dlopen and kept loaded\n"
    "leak:dl_open_worker\n"
    "# thread-local storage of threads still running at exit (LSan suppresses it too)\n"
    "leak:_dl_allocate_tls\n"
    "leak:*tls_get_addr*\n"
    "# locale and time zone data, loaded once and kept\n"
    "leak:^setlocale$\n"
    "leak:^tzset_internal$\n"
    "leak:^__tzfile_read$\n";

bool hs_supp_template_match(const char *templ, const char *str)
{
    bool start = false, asterisk = false;
    if (!str || !*str)
        return false;
    if (templ && *templ == '^') {
        start = true;
        templ++;
    }
    while (templ && *templ) {
        if (*templ == '*') {
            templ++;
            start = false;
            asterisk = true;
            continue;
        }
        if (*templ == '$')
            return *str == '\0' || asterisk;
        if (*str == '\0')
            return false;
        size_t seg = strcspn(templ, "*$");
        const char *at = memmem(str, strlen(str), templ, seg);
        if (!at || (start && at != str))
            return false;
        str = at + seg;
        templ += seg;
        start = false;
        asterisk = false;
    }
    return true;
}

static int supp_add(hs_supp_t *s, const char *pat, size_t len, const char *origin, unsigned line)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        hs_supp_rule_t *r = realloc(s->rules, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        s->rules = r;
        s->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, pat, len);
    copy[len] = '\0';
    s->rules[s->n++] = (hs_supp_rule_t){.pattern = copy, .origin = origin, .line = line};
    return 0;
}

static void supp_unknown(hs_supp_t *s, const char *line, size_t len, unsigned lineno)
{
    if (s->unknown++ > 0)
        return;
    const char *colon = memchr(line, ':', len);
    size_t n = colon ? (size_t)(colon - line) : 0;
    if (n >= sizeof(s->unknown_type))
        n = sizeof(s->unknown_type) - 1;
    memcpy(s->unknown_type, line, n);
    s->unknown_type[n] = '\0';
    s->unknown_line = lineno;
}

int hs_supp_parse(hs_supp_t *s, const char *text, size_t len, const char *origin)
{
    const char *p = text, *end = text + len;
    for (unsigned lineno = 1; p < end; lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *b = p, *e = eol;
        p = nl ? nl + 1 : end;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        if (b == e || *b == '#')
            continue;
        if (e - b >= 5 && memcmp(b, "leak:", 5) == 0) {
            if (supp_add(s, b + 5, (size_t)(e - b - 5), origin, lineno) != 0)
                return -ENOMEM;
        } else {
            supp_unknown(s, b, (size_t)(e - b), lineno);
        }
    }
    return 0;
}

int hs_supp_match(const hs_supp_t *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (hs_supp_template_match(s->rules[i].pattern, str))
            return (int)i;
    return -1;
}
