/*
 * The CLI's JSON writer (json.c): text on a buffer for `heapsift web`'s API, and the same
 * on a FILE for the views' --json output; plus the one reader the CLI needs.
 */
#ifndef HS_JSON_H
#define HS_JSON_H

#include "base/buf.h"
#include "reports/report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* JSON text on a buffer; each returns 0 or -ENOMEM. */
int hs_json_str(hs_buf_t *b, const char *s);   /* a quoted, escaped string; NULL: null */
int hs_json_key(hs_buf_t *b, const char *key); /* "key": */
/* A number when v >= 0 or negative allowed, else null: for "unknown" values (-1). */
int hs_json_int_or_null(hs_buf_t *b, int64_t v);
/* The numeric value of a top-level key of a JSON object (a flat search that skips
 * strings), like "rss" in {"rss": 123, ...}. True when found. */
bool hs_json_find_num(const char *json, const char *key, double *out);

/* Writes s as a JSON string (quoted, escaped by hs_json_str) on f. */
void hs_view_json_str(const char *s, FILE *f);
/* A JSON array of n integers, and one of the names of report nodes frames[0..n). */
void hs_view_json_ints(const int64_t *v, size_t n, FILE *f);
void hs_view_json_frames(const hs_report_t *r, const uint32_t *frames, size_t n, FILE *f);

#endif
