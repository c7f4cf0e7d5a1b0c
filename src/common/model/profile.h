/*
 * The one data model: a pprof profile (profile.proto from google/pprof), in memory.
 * Readers produce it, writers and views consume it. Strings live in an interned string
 * table (index 0 is ""), as on the wire; ids of mappings, functions and locations are
 * 1-based and equal to their index + 1 when built with the add functions below.
 * Not thread-safe; the caller owns the profile and frees it with hs_profile_free.
 */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t type; /* string index */
    int64_t unit; /* string index */
} hs_value_type_t;

typedef struct {
    uint64_t id;
    uint64_t memory_start, memory_limit, file_offset;
    int64_t filename; /* string index */
    int64_t build_id; /* string index */
    bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
} hs_mapping_t;

typedef struct {
    uint64_t id;
    int64_t name, system_name, filename; /* string indices */
    int64_t start_line;
} hs_function_t;

typedef struct {
    uint64_t function_id;
    int64_t line;
} hs_line_t;

/* lines[0] is the innermost (inlined) function, the last is the caller that holds it. */
typedef struct {
    uint64_t id;
    uint64_t mapping_id;
    uint64_t address;
    hs_line_t *lines;
    size_t nlines;
    bool is_folded;
} hs_location_t;

typedef struct {
    int64_t key, str; /* string indices */
    int64_t num, num_unit;
} hs_label_t;

/* location_ids[0] is the leaf. values has one entry per sample type. fvalues is NULL,
 * or (set by a reader whose input is unsampled in floating point, as jeprof does with
 * jemalloc's heap_v2) the values before their rounding to values: views that sum samples
 * sum these and round only the sums, as that reader's reference tool does. Never written
 * to a pprof file, whose values are integers. */
typedef struct {
    uint64_t *location_ids;
    size_t nlocs;
    int64_t *values;
    double *fvalues;
    hs_label_t *labels;
    size_t nlabels;
} hs_sample_t;

typedef struct hs_strtab hs_strtab_t;

typedef struct hs_profile {
    hs_value_type_t *sample_types;
    size_t ntypes;
    hs_sample_t *samples;
    size_t nsamples, samples_cap;
    hs_mapping_t *mappings;
    size_t nmappings, mappings_cap;
    hs_location_t *locations;
    size_t nlocations, locations_cap;
    hs_function_t *functions;
    size_t nfunctions, functions_cap;
    char **strings;
    size_t nstrings, strings_cap;
    hs_strtab_t *strtab;              /* interning index; NULL until first hs_profile_str */
    int64_t drop_frames, keep_frames; /* string indices */
    int64_t time_nanos, duration_nanos;
    hs_value_type_t period_type;
    int64_t period;
    int64_t *comments; /* string indices */
    size_t ncomments;
    int64_t default_sample_type; /* string index */
    /* Not part of the format: lines a text reader skipped as malformed (pprof and jeprof
     * skip them too), and the number of the first; the file reader warns of them. */
    size_t nskipped, skipped_line;
} hs_profile_t;

/* Returns a new empty profile (string 0 = ""), or NULL on ENOMEM. */
hs_profile_t *hs_profile_new(void);
void hs_profile_free(hs_profile_t *p);

/* Interns s; returns its string index, or -1 on ENOMEM. NULL interns "". */
int64_t hs_profile_str(hs_profile_t *p, const char *s);
/* The string at index i, or "" when out of range. */
const char *hs_profile_get_str(const hs_profile_t *p, int64_t i);

int hs_profile_add_sample_type(hs_profile_t *p, const char *type, const char *unit);
/* Each returns the new id (>= 1) or 0 on ENOMEM. */
uint64_t hs_profile_add_mapping(hs_profile_t *p, const hs_mapping_t *m);
/* Functions are interned on (name, system_name, filename, start_line). */
uint64_t hs_profile_add_function(hs_profile_t *p, const char *name, const char *system_name,
                                 const char *filename, int64_t start_line);
uint64_t hs_profile_add_location(hs_profile_t *p, uint64_t mapping_id, uint64_t address,
                                 const hs_line_t *lines, size_t nlines);
/* values: p->ntypes entries, copied. Returns 0 or -ENOMEM. */
int hs_profile_add_sample(hs_profile_t *p, const uint64_t *location_ids, size_t nlocs,
                          const int64_t *values);
/* Gives the last sample added its unrounded values (p->ntypes entries, copied; see
 * hs_sample_t.fvalues). Returns 0, -EINVAL without a sample or -ENOMEM. */
int hs_profile_set_fvalues(hs_profile_t *p, const double *fvalues);
int hs_profile_add_comment(hs_profile_t *p, const char *text);

/* Lookups by id; NULL when absent. O(1) when ids are dense (index + 1), else a scan. */
const hs_location_t *hs_profile_location(const hs_profile_t *p, uint64_t id);
const hs_function_t *hs_profile_function(const hs_profile_t *p, uint64_t id);
const hs_mapping_t *hs_profile_mapping(const hs_profile_t *p, uint64_t id);

/* Index of the sample type named name, or -1. */
int hs_profile_sample_type_index(const hs_profile_t *p, const char *name);

/* Lower-level builders, for readers that must keep a file's own ids and string indices.
 * hs_profile_push_str appends s[0..len) at the next index without deduplication (the
 * interning index picks it up lazily; the first copy of a string wins) and returns its
 * index or -1. The push_* functions append a zeroed element and return it, or NULL on
 * ENOMEM; the pointer is valid until the next push of the same kind. The caller sets
 * ids; lines and labels it sets must come from malloc (hs_profile_free frees them). */
int64_t hs_profile_push_str(hs_profile_t *p, const char *s, size_t len);
hs_mapping_t *hs_profile_push_mapping(hs_profile_t *p);
hs_function_t *hs_profile_push_function(hs_profile_t *p);
hs_location_t *hs_profile_push_location(hs_profile_t *p);
hs_sample_t *hs_profile_push_sample(hs_profile_t *p);
/* Adds a label to sample number idx (key and str interned; num_unit may be NULL).
 * Returns 0, -ENOMEM or -EINVAL (idx out of range). */
int hs_profile_add_label(hs_profile_t *p, size_t idx, const char *key, const char *str, int64_t num,
                         const char *num_unit);
/* The same with the strings interned already (a reader's one label per sample, whose
 * key it looks up once). */
int hs_profile_add_label_interned(hs_profile_t *p, size_t idx, hs_label_t l);

#endif
