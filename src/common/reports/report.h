/*
 * The report model every view of the CLI shares (top, traces, peek, tree, collapsed,
 * flamegraph, diff), reproducing the pipeline of `go tool pprof`'s text reports: samples
 * merged like pprof's Merge (equal stacks and labels summed, all-zero samples dropped),
 * the allocator's frames pruned by the first profile's drop_frames as pprof's Prune does
 * (dropframes.h; after the merge, as in pprof), the total taken before filtering,
 * --focus/--ignore/--hide applied per location like pprof's FilterSamplesByName, frames
 * aggregated to pprof nodes at function, line or address granularity, cum counted once
 * per sample, the 0.5% node fraction, pprof's
 * orderings, and its number, unit and percentage formatting. A diff is a report over two
 * profiles, the base with sign -1, exactly as pprof's -diff_base builds one.
 *
 * Each sample also carries the variance of its sampled estimate (docs/sampling.md), so a
 * row's value gets a confidence interval and a diff can tell growth from noise.
 *
 * Owns its allocations only; never modifies the profiles it reads. Not thread-safe.
 */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include "noise.h"
#include "model/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    HS_GRAN_FUNCTIONS, /* pprof's default: one node per function */
    HS_GRAN_LINES,     /* pprof -lines: per function and source line */
    HS_GRAN_ADDRESSES, /* pprof -addresses: per address (and inlined line) */
} hs_gran_t;

typedef struct {
    const char *sample_type; /* name or index; NULL: the default sample type */
    hs_gran_t gran;
    /* POSIX extended regular expressions (unanchored, like Go's MatchString), or NULL.
     * focus keeps samples with a frame whose function name, file or mapping file matches,
     * ignore drops them, hide removes matching frames, show keeps only matching frames
     * (pprof's -show: a location keeps the lines whose function name or file matches, all
     * of them when its mapping file does; one with none left leaves the stack). */
    const char *focus, *ignore, *hide;
    const char *show;
    /* pprof's -tagfocus/-tagignore: [KEY=]REGEX[,REGEX...] on string labels, or
     * [KEY=]VALUE, LO:, :HI, LO:HI with units (1ms, 64kb) on numeric labels. */
    const char *tagfocus, *tagignore;
    bool trim_paths; /* pprof's trimPath on file names (its graph reports do it) */
    /* pprof's ObjNames (its -list and -raw): every node keeps its mapping file and its
     * function's start line, not only unnamed ones. */
    bool obj_names;
    /* Every comment in the header; else heapsift's accounting lines (exact:, rss:, maps:
     * ...: heapsift stats' material) are left out of it. */
    bool all_comments;
    /* Keep the frames the first profile's drop_frames (and keep_frames) would prune, as
     * pprof's Prune does (dropframes.h) before any filter: the allocator's own frames. */
    bool no_drop_frames;
} hs_report_opts_t;

/* A node: pprof's NodeInfo and its values. */
typedef struct {
    char *name;        /* pprof's PrintableName */
    const char *fname; /* function name, "" if none */
    char *file;        /* cleaned source file, "" if none */
    const char *obj;   /* mapping file, only for unnamed nodes */
    uint64_t address;
    int64_t start_line, lineno;
    int64_t flat, cum; /* in a diff: new minus base, as pprof has them */
    /* flat and cum summed from the samples' unrounded values (hs_sample_t.fvalues); when
     * the report is fractional, flat and cum are these truncated, as jeprof prints. */
    double fflat, fcum;
    /* Sampling variance of the profiles with sign +1 (in a diff, new's side alone) */
    double flat_var, cum_var;
    /* In a diff, the base's side: its flat and cum as positive values (new's are flat +
     * base_flat and cum + base_cum) and their variances. 0 without a base. */
    int64_t base_flat, base_cum;
    double base_flat_var, base_cum_var;
    size_t stamp; /* internal: last sample that added to cum, + 1 */
    bool kept;    /* set by hs_report_select */
} hs_rnode_t;

/* A merged sample: its stack as node indices, leaf first. */
typedef struct {
    uint32_t *frames;
    uint8_t *inl; /* 1 when the frame is an inlined call (not its location's last line) */
    size_t nframes;
    int64_t value; /* of the chosen sample type, negated for a diff base */
    double fvalue; /* the same unrounded (hs_sample_t.fvalues), else value */
    double var;    /* variance of value from sampling; 0 when exact */
    const hs_profile_t *prof;
    const hs_sample_t *src; /* the first sample merged in (for labels) */
    const int64_t *vals;    /* the merged values of every sample type (prof's order) */
    bool base;              /* from a diff base */
} hs_rsample_t;

typedef struct hs_report_priv hs_report_priv_t;

typedef struct {
    int sidx;
    const char *sample_type, *sample_unit;
    hs_rnode_t *nodes;
    size_t nnodes;
    hs_rsample_t *samples; /* after filtering, in pprof's merged order */
    size_t nsamples;
    int64_t total; /* pprof's total: sum of |value| before filtering (of the base in a diff) */
    /* Whether a profile's samples carry unrounded values (a jemalloc heap_v2 file): then
     * total and the nodes' flat and cum are the truncations of the sums of those, as
     * jeprof truncates only what it prints, never a stack's value before summing it. */
    bool fractional;
    /* Whether every profile with sign +1 (exact), or -1 (base_exact), was recorded at
     * rate 1 (period <= 1): its values are the truth, no sampled estimates. */
    bool exact, base_exact;
    /* The header of the merged profile (pprof's combineHeaders). */
    const hs_profile_t *first;
    int64_t time_nanos, duration_nanos;
    const char **comments;
    size_t ncomments;
    bool focus_matched, ignore_matched, hide_matched;
    hs_report_priv_t *priv;
} hs_report_t;

/* Builds the report over n profiles; signs[i] is +1, or -1 for a diff base (then every
 * profile must have the same sample types). Returns 0, -ENOMEM, -EPROTO (no sample types,
 * incompatible profiles) or -EINVAL (unknown sample type, bad regular expression), with a
 * message in err. */
int hs_report_build(hs_report_t *r, const hs_profile_t *const *profs, const int *signs, size_t n,
                    const hs_report_opts_t *o, char *err, size_t errlen);
void hs_report_free(hs_report_t *r);

/* pprof's SampleIndexByName: a name (also without "inuse_"), an index, or NULL for the
 * default sample type, else the last one. -1 when name matches nothing. */
int hs_report_sample_index(const hs_profile_t *p, const char *name);

/* Nodes ordered like pprof: by |flat| (or |cum| when cum), then name, then the other
 * value, then pprof's NodeInfo text. Trimmed to |cum| >= fraction of the sum of flat
 * values (0: keep all), then to count nodes (0: all); kept nodes get .kept. Returns a
 * malloc'ed array of *nshown node indices; *orig is the count before `count`, *dropped
 * the count under the fraction. NULL on ENOMEM. */
uint32_t *hs_report_select(hs_report_t *r, bool cum, double fraction, long count, size_t *nshown,
                           size_t *orig, size_t *dropped);

/* pprof's last tie-breaker between nodes (compareNodes: fmt.Sprint of their NodeInfo). */
int hs_report_node_info_cmp(const hs_rnode_t *l, const hs_rnode_t *r);

/* Numbers the distinct stacks (sequences of nodes) of the report's samples: ids[i] (room
 * for nsamples) is the stack of sample i, from 0 in first-seen order; with leaf_only a
 * stack is its leaf node alone. Samples of different profiles share ids when their frames
 * are equal (nodes are by name, file and line, never by address unless the granularity
 * is addresses). Returns the count of stacks, or -ENOMEM. */
long hs_report_stack_ids(const hs_report_t *r, bool leaf_only, uint32_t *ids);

/* An edge between nodes, as pprof's graph has them. */
typedef struct {
    uint32_t from, to; /* node index + 1 */
    int64_t weight;
    size_t stamp;
    bool inl;
    bool residual; /* goes over frames of nodes that were not kept (pprof draws it dotted) */
} hs_redge_t;

/* The edges between kept nodes (all nodes when kept_only is false), with pprof's weights
 * (once per sample), inline and residual flags. *out is malloc'ed; returns the count, or -ENOMEM.
 */
long hs_report_edges(const hs_report_t *r, bool kept_only, hs_redge_t **out);
/* The same, but only the edges into the nodes that into marks (indexed by node; NULL:
 * every node): what the top table's "(inline)" marks need, a few nodes' edges. */
long hs_report_edges_into(const hs_report_t *r, bool kept_only, const bool *into, hs_redge_t **out);

/* pprof's edge order: |weight| descending, then source name, then destination name. */
void hs_report_sort_edges(const hs_report_t *r, hs_redge_t *e, size_t n);

/* A call tree (pprof's newTree shape): one tree node per distinct path of report nodes
 * from the root. Index 0 is the root (node UINT32_MAX); links are tree indices, 0 = none. */
typedef struct {
    uint32_t node; /* report node index */
    uint32_t parent, child, sibling, depth;
    int64_t flat, cum;            /* from the profiles with sign +1 */
    int64_t base_flat, base_cum;  /* from diff bases, as positive values */
    double cum_var, base_cum_var; /* sampling variance of cum and of base_cum */
} hs_rtree_t;

/* Builds the call tree of the report's samples; *out is malloc'ed. Returns the count of
 * tree nodes (>= 1), or -ENOMEM. */
long hs_report_tree(const hs_report_t *r, hs_rtree_t **out);
/* The children of tree node i ordered by their nodes' names (malloc'ed; *n gets their
 * count), or NULL on ENOMEM. */
uint32_t *hs_report_tree_children(const hs_report_t *r, const hs_rtree_t *t, uint32_t i, size_t *n);

/* ---- sample labels (report_tags.c) ----------------------------------------------------- */

/* What pprof's decoder makes of a label: a string label (str set), a numeric one (num or
 * num_unit set) or nothing (both empty: dropped). */
enum { HS_LABEL_NONE, HS_LABEL_STR, HS_LABEL_NUM };
int hs_label_kind(const hs_label_t *l);

/* The unit of each numeric label key of a profile (pprof's NumLabelUnits: the first unit
 * given for the key, else "bytes" for alignment and request, else the key itself). */
typedef struct {
    const hs_profile_t *p;
    int64_t *unit; /* per string index: unit string index, -1 numeric without unit, -2 */
} hs_numunits_t;
int hs_numunits_init(hs_numunits_t *u, const hs_profile_t *p); /* 0 or -ENOMEM */
void hs_numunits_free(hs_numunits_t *u);
const char *hs_numunits_get(const hs_numunits_t *u, int64_t key);
/* The same for a profile the report was built over (p is one of its inputs). */
const char *hs_report_num_unit(const hs_report_t *r, const hs_profile_t *p, int64_t key);

/* A compiled tag filter (hs_report_opts_t.tagfocus). name ("tagfocus") is for errors.
 * Returns 0, -ENOMEM or -EINVAL (bad regular expression, message in err). */
typedef struct hs_tagfilter hs_tagfilter_t;
int hs_tagfilter_compile(const char *spec, const char *name, hs_tagfilter_t **out, char *err,
                         size_t errlen);
/* Whether sample s of u's profile matches (pprof's semantics, numeric units from u). */
bool hs_tagfilter_match(const hs_tagfilter_t *f, const hs_numunits_t *u, const hs_sample_t *s);
void hs_tagfilter_free(hs_tagfilter_t *f);

/* pprof's -tags report of the (filtered) samples: per label key its total, then each value
 * with its share, numeric values scaled to out_unit ("minimum": auto). 0 or -ENOMEM. */
int hs_report_print_tags(const hs_report_t *r, const char *out_unit, FILE *f);

/* ---- formatting (pprof's measurement package) ---------------------------------------- */

/* The output unit for a unit option ("minimum" or "auto": chosen from the values shown,
 * like pprof's selectOutputUnit; else B, kB, ...). shown: node indices. */
const char *hs_report_out_unit(const hs_report_t *r, const char *unit, const uint32_t *shown,
                               size_t n);
/* Writes s (at most max bytes, or to its NUL) as XML text or an attribute value: & < > "
 * and ' escaped (the SVGs of the flame graph and the call graph). */
void hs_report_xml_escape(FILE *f, const char *s, size_t max);

/* measurement.ScaledLabel of value from the report's sample unit to unit. */
void hs_report_label(char *out, size_t len, int64_t value, const char *from, const char *to);
/* measurement.Scale: value in from-units expressed in to-units; *unit gets the unit
 * written ("" when uninteresting). */
double hs_report_scale(double value, const char *from, const char *to, const char **unit);
/* The same for a real value (an interval), in the report's sample unit. */
void hs_report_flabel(char *out, size_t len, double value, const char *from, const char *to);
/* measurement.Percentage: width 6. */
void hs_report_percent(char *out, size_t len, int64_t value, int64_t total);
/* The five columns pprof's top and peek print before a node's name (flat, flat%, sum%, cum,
 * cum%; sum: flat summed over the rows so far, this one included), with no newline. */
void hs_report_print_cells(const hs_report_t *r, const hs_rnode_t *nd, int64_t sum, const char *ou,
                           FILE *out);
/* The command-line unit (B, kB, MB, GB, TB, PB, auto) as pprof names it, or NULL. */
const char *hs_report_unit_arg(const char *u);

/* Whether comment c is one of the accounting lines a heapsift dump writes (exact:,
 * live samples=, estimate:, rss:, maps:, profiler:, allocator:), or the process line
 * (process:): the views show them with --comments only. */
bool hs_report_accounting_comment(const char *c);

/* pprof's ProfileLabels (File, Build ID, comments, Type, Time, Duration) on f. */
void hs_report_print_header(const hs_report_t *r, const char *out_unit, FILE *f);
/* pprof's "Active filters:" lines for the options that are set. */
void hs_report_print_filters(const hs_report_opts_t *o, FILE *f);

/* An extra column of the top report, printed "%*s" before the name. */
typedef struct {
    const char *header; /* NULL ends a list */
    int width;
    void (*cell)(const hs_report_t *r, const hs_rnode_t *n, const char *out_unit, char *out,
                 size_t len);
} hs_top_column_t;

/* What the top table shows: sorted by cum, at most count rows (0: all), in unit (pprof's
 * unit names; NULL: "minimum"), and the filters to list (NULL: none). */
typedef struct {
    bool cum;
    long count;
    const char *unit;
    const hs_report_opts_t *filters;
} hs_top_opts_t;

/* Prints the report's top table on out (report_top.c). Returns 0 or -ENOMEM. */
int hs_report_top(hs_report_t *r, const hs_top_opts_t *o, const hs_top_column_t *cols, FILE *out);

/* ---- intervals and verdicts over the rows (report_noise.c) --------------------------- */

/* The 95% interval (hs_report_interval) of value, in the report's sample unit from, with
 * sampling variance var, as "LO..HI" in unit to (hs_report_flabel's numbers). */
void hs_report_interval_label(char *out, size_t len, double value, double var, const char *from,
                              const char *to);
/* The same as offsets from value, where a single figure once stood: "+A/-B", or "+-A"
 * when both print alike ("+-0": exact). */
void hs_report_interval_offsets(char *out, size_t len, double value, double var, const char *from,
                                const char *to);
/* A diff row's change judged at diff's level (hs_report_compare, HS_NOISE_ALPHA): flat,
 * or cum when cum; and a call tree node's change of cum, as the flame graph colours it. */
hs_verdict_t hs_report_row_verdict(const hs_report_t *r, const hs_rnode_t *n, bool cum);
hs_verdict_t hs_report_tree_verdict(const hs_report_t *r, const hs_rtree_t *t);

/* Writes the report's flame graph, an interactive SVG, on f; diff: colours from the
 * change against the diff base (report_flame.c). Returns 0 or -ENOMEM. */
int hs_report_flamegraph(const hs_report_t *r, bool diff, FILE *f);

/* Prints where the RSS went, from p's accounting comments, headed by name (plain byte
 * counts when bytes) on f (report_stats.c). 0, -ENOMEM, or -ENOENT when p carries no
 * accounting. */
int hs_report_stats(const hs_profile_t *p, const char *name, bool bytes, FILE *f);

/* ---- the call graph, as pprof -dot draws it (report_dot.c) ------------------------------ */

/* pprof's trimming of its graph outputs: nodes whose |cum| is under node_fraction of the
 * sum of flat values are dropped (0.005), edges under edge_fraction (0.001), then the
 * node_count (80) nodes that pprof's entropy score ranks first are kept (0: all). */
typedef struct {
    double node_fraction, edge_fraction;
    long node_count;
    const char *unit;                /* pprof's unit names; NULL: "minimum" */
    const hs_report_opts_t *filters; /* for the legend's "Active filters:" (NULL: none) */
    bool diff;                       /* a report with a diff base: colours from verdicts */
} hs_graph_opts_t;

/* The trimmed graph: nodes (report node indices) in pprof's order, which numbers them
 * N1, N2...; edges between them (from/to: report node index + 1) in pprof's edge order. */
typedef struct {
    uint32_t *nodes;
    size_t nnodes;
    hs_redge_t *edges;
    size_t nedges;
    size_t orig;          /* nodes left after the fraction, before node_count */
    size_t dropped_nodes; /* under node_fraction */
    size_t dropped_edges; /* under edge_fraction, counted as pprof counts them */
} hs_graph_t;

/* The default options, pprof's for -dot and -svg. */
void hs_graph_opts_default(hs_graph_opts_t *o);
/* Builds r's graph (sets the nodes' .kept). 0 or -ENOMEM; free it with hs_graph_free. */
int hs_graph_build(hs_report_t *r, const hs_graph_opts_t *o, hs_graph_t *g);
void hs_graph_free(hs_graph_t *g);
/* Writes the graph in Graphviz's DOT language, as pprof -dot writes it: a legend of the
 * profile's labels and the counts dropped, boxes with flat and cum and font sizes grown
 * with flat, edges as thick as their weight, dotted when they pass over dropped nodes.
 * With o->diff, a node whose cum changed beyond sampling noise is red (grew) or green
 * (shrank), grey otherwise, and carries class "grew", "shrank" or "noise". 0 or -ENOMEM. */
int hs_graph_write_dot(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                       FILE *f);
/* The same graph as an SVG image laid out by heapsift itself (report_graphsvg.c): layers
 * from the callers down, no Graphviz needed, for where running a program is no option
 * (inside the profiled process). 0 or -ENOMEM. */
int hs_graph_write_svg(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                       FILE *f);

/* What both writers draw (report_dot.c). A node's label as pprof writes it: name parts,
 * file:line, flat and "of cum", separated by "\n" escapes (dot) or newlines. */
void hs_graph_node_label(const hs_report_t *r, const hs_rnode_t *n, const char *ou, bool dot,
                         FILE *f);
/* pprof's font size from flat (8 to 24 points) against the largest |flat| shown. */
int hs_graph_font_size(int64_t flat, double max_flat);
double hs_graph_max_flat(const hs_report_t *r, const hs_graph_t *g);
/* A node's border and fill colours ("#rrggbb"), and its class in a diff (else NULL). */
const char *hs_graph_node_colors(const hs_report_t *r, const hs_rnode_t *n,
                                 const hs_graph_opts_t *o, char *fg, char *bg, size_t len);
/* An edge's layout weight, pen width (1..6) and colour. */
void hs_graph_edge_style(const hs_report_t *r, const hs_redge_t *e, int *weight, int *width,
                         char *color, size_t len);
/* The legend's lines, each ended by a newline (malloc'ed), or NULL on ENOMEM. */
char *hs_graph_legend(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                      const char *ou);

#endif
