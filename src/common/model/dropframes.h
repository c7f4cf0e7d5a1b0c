/*
 * drop_frames: which frames of a stack belong to the allocator rather than to the code that
 * asked for the memory. Owns heapsift's rule (the regular expression its own profiles carry
 * in Profile.drop_frames) and pprof's way of applying any profile's rule (Profile.Prune of
 * google/pprof's profile package, as `go tool pprof` runs it on every profile it reads):
 *
 *  - the expression is anchored, ^(drop_frames)$ (and ^(keep_frames)$), and matched against
 *    each function name simplified as pprof's simplifyFunc does: a leading '.' dropped, the
 *    name cut at its first '(' that does not open "(anonymous namespace)" or "operator()";
 *  - a location's lines are scanned from the outermost (the caller that holds the inlined
 *    ones) inwards; at the first line that matches drop and not keep, the lines from it
 *    inwards go; when that is the outermost line, the whole location goes;
 *  - a stack is scanned from the root: frames that match before the first one that does not
 *    (the first "user" frame) stay, and at the next matching frame past it the stack is cut,
 *    so the leaf becomes the frame below the root-most allocator frame.
 *
 * The rule is valid in POSIX extended syntax (what heapsift compiles it with, regcomp) and in
 * RE2 (what pprof compiles it with), and means the same in both: literals, groups,
 * alternation, bracket expressions, '.', '*', '+', '?' and {n}, no escapes but of
 * punctuation. A rule that does not compile prunes nothing, as in pprof.
 *
 * Pure code over the profile model, no globals but the rule; memory from malloc. The views
 * (report.c), the leak report (leakreport.c) and the Go text reader (read_legacy_go.c) call
 * it; the library's dump writes hs_dropframes_rule into every profile (dump.c).
 */
#ifndef HS_DROPFRAMES_H
#define HS_DROPFRAMES_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* heapsift's drop_frames: pprof's allocation expression for gperftools and tcmalloc
 * profiles brought up to date (GCC 12's std::__new_allocator, every operator new and
 * delete), Rust's allocation plumbing (__rust_alloc & co, alloc::alloc, alloc::raw_vec,
 * GlobalAlloc and Allocator impls), and jemalloc's, mimalloc's and tcmalloc's entry points,
 * demangled and, where that is cheap, mangled. Container methods (vector::reserve,
 * _M_realloc_insert, basic_string::_M_create, Vec::reserve) do not match. */
extern const char hs_dropframes_rule[];

/* pprof's simplifyFunc: the length of the part of name the expressions see, which starts
 * at name + (*name == '.'). */
size_t hs_dropframes_simplify(const char *name, const char **start);

/* A compiled pair of expressions. */
typedef struct hs_dropframes_rx hs_dropframes_rx_t;

/* Compiles drop (and keep, when neither NULL nor "") anchored. Returns 0 with *out set,
 * -EINVAL when an expression does not compile, or -ENOMEM. */
int hs_dropframes_compile(const char *drop, const char *keep, hs_dropframes_rx_t **out);
void hs_dropframes_rx_free(hs_dropframes_rx_t *rx);
/* Whether the function named name is an allocator frame: its simplified name matches drop
 * and not keep. An empty name never matches. */
bool hs_dropframes_match(const hs_dropframes_rx_t *rx, const char *name);

/* What the rule does to one profile: per location (by index into p->locations), how many
 * lines go from its inner side; all of them: the location goes whole. */
typedef struct {
    uint32_t *cut; /* NULL: nothing is dropped */
    size_t n;
    uint64_t *ids; /* sorted location ids with their indices, when ids are not index + 1 */
    size_t *idx;
} hs_dropframes_plan_t;

/* Plans the pruning of p by drop and keep (p's own drop_frames and keep_frames, or another
 * profile's: a diff prunes with its first profile's rule, as pprof's Merge keeps it). drop
 * NULL or "", or an expression that does not compile: an empty plan. 0 or -ENOMEM. */
int hs_dropframes_plan(const hs_profile_t *p, const char *drop, const char *keep,
                       hs_dropframes_plan_t *plan);
void hs_dropframes_plan_free(hs_dropframes_plan_t *plan);

/* The index of the frame a sample's pruned stack starts at (leaf first): its frames are
 * location_ids[start..nlocs). 0 with an empty plan. */
size_t hs_dropframes_start(const hs_dropframes_plan_t *plan, const hs_profile_t *p,
                           const hs_sample_t *s);
/* How many lines of location index li (of nlines) go from its inner side where it stays in
 * a stack: its cut, unless the cut takes it whole (such a location stays only on the root
 * side of a stack, and whole). */
static inline size_t hs_dropframes_trim(const hs_dropframes_plan_t *plan, size_t li, size_t nlines)
{
    size_t c = plan->cut && li < plan->n ? plan->cut[li] : 0;
    return c < nlines ? c : 0;
}

/* Prunes p in place by drop and keep: stacks cut, lines trimmed (pprof's Prune). 0 or
 * -ENOMEM. */
int hs_dropframes_apply(hs_profile_t *p, const char *drop, const char *keep);

#endif
