/*
 * Leak suppressions in LeakSanitizer's format and with its matching rules, so a file
 * written for LSan works unchanged: one `leak:PATTERN` per line, `#` comments and blank
 * lines ignored, leading blanks and trailing blanks (and \r) stripped. A pattern matches
 * a string when its pieces between `*` occur in it in order (a substring match, leftmost
 * first, no backtracking, exactly as LSan's TemplateMatch); `^` at the start anchors it
 * to the start, `$` anchors it to the end. A stack is suppressed when, frame by frame from
 * the allocation site outwards, a pattern matches the frame's module path, or one of its
 * (inlined) functions' names or source file names; the first pattern of the file that
 * matches gets the credit. Pure code: no I/O, memory from malloc (the library calls it
 * under its reentrancy guard). Used by the leak report (leakreport.c).
 */
#ifndef HS_SUPPRESS_H
#define HS_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *pattern;      /* the text after "leak:" */
    const char *origin; /* where it came from ("built-in" or the file's path), not owned */
    unsigned line;      /* line number in its origin */
    /* What it suppressed in the last report. */
    uint64_t sites;
    double objects, bytes;
} hs_supp_rule_t;

/* The rules and their patterns come from malloc. The library parses its set once and
 * keeps it for the life of the process (the report runs at exit), so nothing here frees
 * one; a caller that must (the unit test) frees each pattern, then rules. */
typedef struct {
    hs_supp_rule_t *rules;
    size_t n, cap;
    unsigned unknown;      /* lines of another type (e.g. race:), ignored */
    unsigned unknown_line; /* the first of them */
    char unknown_type[32]; /* and its type ("" when the line had no colon) */
} hs_supp_t;

/* LSan's TemplateMatch: true when templ matches str. An empty or NULL str never matches;
 * an empty template matches any non-empty str. */
bool hs_supp_template_match(const char *templ, const char *str);

/* Adds the leak: rules of text[0..len) (origin is kept by pointer and must outlive s).
 * Lines of other types are counted in s->unknown and otherwise ignored. Returns 0 or
 * -ENOMEM. */
int hs_supp_parse(hs_supp_t *s, const char *text, size_t len, const char *origin);

/* The index of the first rule matching str, or -1. */
int hs_supp_match(const hs_supp_t *s, const char *str);

/* The suppressions heapsift always applies (memory the C and C++ runtimes keep for the
 * life of the process), in the file format; origin "built-in". */
extern const char hs_supp_builtin[];

#endif
