/*
 * The formatting side of the report model (report.h): pprof's measurement package (unit
 * tables, Scale, ScaledLabel, Percentage), its choice of the "minimum" output unit, and
 * the header lines of its text reports (ProfileLabels, Active filters). Output is
 * byte-identical to `go tool pprof`'s; nothing here allocates.
 */
#define _GNU_SOURCE /* tm_zone */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- pprof's measurement package ------------------------------------------------------ */

typedef struct {
    const char *name;
    const char *aliases[4];
    double factor;
} fmt_unit_t;

typedef struct {
    fmt_unit_t dflt;
    fmt_unit_t units[10];
} fmt_unit_type_t;

static const fmt_unit_type_t fmt_unit_types[] = {
    {{"B", {"b", "byte"}, 1},
     {{"B", {"b", "byte"}, 1},
      {"kB", {"kb", "kbyte", "kilobyte"}, 1024.0},
      {"MB", {"mb", "mbyte", "megabyte"}, 1048576.0},
      {"GB", {"gb", "gbyte", "gigabyte"}, 1073741824.0},
      {"TB", {"tb", "tbyte", "terabyte"}, 1099511627776.0},
      {"PB", {"pb", "pbyte", "petabyte"}, 1125899906842624.0}}},
    {{"s", {NULL}, 1e9},
     {{"ns", {"ns", "nanosecond"}, 1},
      {"us", {"\xce\xbcs", "us", "microsecond"}, 1e3},
      {"ms", {"ms", "millisecond"}, 1e6},
      {"s", {"s", "sec", "second"}, 1e9},
      {"hrs", {"hour", "hr"}, 3600e9}}},
    {{"GCU", {NULL}, 1},
     {{"n*GCU", {"nanogcu"}, 1e-9},
      {"u*GCU", {"microgcu"}, 1e-6},
      {"m*GCU", {"milligcu"}, 1e-3},
      {"GCU", {"gcu"}, 1},
      {"k*GCU", {"kilogcu"}, 1e3},
      {"M*GCU", {"megagcu"}, 1e6},
      {"G*GCU", {"gigagcu"}, 1e9},
      {"T*GCU", {"teragcu"}, 1e12},
      {"P*GCU", {"petagcu"}, 1e15}}},
};

/* The unit of ut named by unit (lower-cased, one plural "s" dropped), or NULL. */
static const fmt_unit_t *fmt_sniff_unit(const fmt_unit_type_t *ut, const char *unit)
{
    char low[64];
    size_t n = strlen(unit);
    if (n >= sizeof(low))
        return NULL;
    for (size_t i = 0; i <= n; i++)
        low[i] = (unit[i] >= 'A' && unit[i] <= 'Z') ? (char)(unit[i] + 32) : unit[i];
    if (n > 2 && low[n - 1] == 's')
        low[n - 1] = '\0';
    for (size_t i = 0; i < 10 && ut->units[i].name; i++)
        for (size_t j = 0; j < 4 && ut->units[i].aliases[j]; j++)
            if (strcmp(ut->units[i].aliases[j], low) == 0)
                return &ut->units[i];
    return NULL;
}

static bool fmt_auto_scale(const fmt_unit_type_t *ut, double v, double *out, const char **unit)
{
    double f = 0;
    for (size_t i = 0; i < 10 && ut->units[i].name; i++) {
        if (ut->units[i].factor >= f && v / ut->units[i].factor >= 1.0) {
            f = ut->units[i].factor;
            *unit = ut->units[i].name;
        }
    }
    if (f == 0)
        return false;
    *out = v / f;
    return true;
}

static bool fmt_is_auto(const char *to)
{
    return strcmp(to, "minimum") == 0 || strcmp(to, "auto") == 0;
}

/* measurement.Scale: value in from-units expressed in to-units ("minimum" = auto). */
static double fmt_scale(double value, const char *from, const char *to, const char **unit)
{
    if (value < 0) {
        double v = fmt_scale(-value, from, to, unit);
        return -v;
    }
    for (size_t t = 0; t < sizeof(fmt_unit_types) / sizeof(fmt_unit_types[0]); t++) {
        const fmt_unit_type_t *ut = &fmt_unit_types[t];
        const fmt_unit_t *fu = fmt_sniff_unit(ut, from);
        if (!fu)
            continue;
        double v = value * fu->factor, out;
        if (fmt_is_auto(to) && fmt_auto_scale(ut, v, &out, unit))
            return out;
        const fmt_unit_t *tu = fmt_is_auto(to) ? NULL : fmt_sniff_unit(ut, to);
        if (!tu)
            tu = &ut->dflt;
        *unit = tu->name;
        return v / tu->factor;
    }
    static const char *unitless[] = {"count", "sample", "unit", "minimum", "auto"};
    *unit = to;
    for (size_t i = 0; i < 5; i++)
        if (strcmp(to, unitless[i]) == 0)
            *unit = "";
    return value;
}

double hs_report_scale(double value, const char *from, const char *to, const char **unit)
{
    *unit = "";
    return fmt_scale(value, from, to, unit);
}

/* measurement.ScaledLabel: "%.2f" without a trailing ".00", plus the unit. */
void hs_report_flabel(char *out, size_t len, double value, const char *from, const char *to)
{
    const char *unit = "";
    double v = fmt_scale(value, from, to, &unit);
    char num[64];
    snprintf(num, sizeof(num), "%.2f", v);
    size_t n = strlen(num);
    if (n > 3 && strcmp(num + n - 3, ".00") == 0)
        num[n - 3] = '\0';
    if (strcmp(num, "0") == 0 || strcmp(num, "-0") == 0)
        snprintf(out, len, "0");
    else
        snprintf(out, len, "%s%s", num, unit);
}

void hs_report_percent(char *out, size_t len, int64_t value, int64_t total)
{
    double r = 0;
    if (total != 0) {
        r = (double)value / (double)total * 100;
        if (r < 0)
            r = -r;
    }
    if (r >= 99.95 && r <= 100.05)
        snprintf(out, len, "  100%%");
    else if (r >= 1.0)
        snprintf(out, len, "%5.2f%%", r);
    else
        snprintf(out, len, "%5.2g%%", r);
}

void hs_report_print_cells(const hs_report_t *r, const hs_rnode_t *nd, int64_t sum, const char *ou,
                           FILE *out)
{
    char f[64], c[64], fp[32], sp[32], cp[32];
    hs_report_label(f, sizeof(f), nd->flat, r->sample_unit, ou);
    hs_report_label(c, sizeof(c), nd->cum, r->sample_unit, ou);
    hs_report_percent(fp, sizeof(fp), nd->flat, r->total);
    hs_report_percent(sp, sizeof(sp), sum, r->total);
    hs_report_percent(cp, sizeof(cp), nd->cum, r->total);
    fprintf(out, "%10s %s %s %10s %s", f, fp, sp, c, cp);
}

void hs_report_label(char *out, size_t len, int64_t value, const char *from, const char *to)
{
    hs_report_flabel(out, len, (double)value, from, to);
}

const char *hs_report_unit_arg(const char *u)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    if (strcmp(u, "auto") == 0 || strcmp(u, "minimum") == 0)
        return "minimum";
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(u, units[i]) == 0)
            return units[i];
    return NULL;
}

/* pprof's selectOutputUnit for the "minimum" unit: the unit of the smallest non-zero
 * node value, moved up one unit when it is under 1% of the total. */
const char *hs_report_out_unit(const hs_report_t *r, const char *unit, const uint32_t *shown,
                               size_t n)
{
    if (strcmp(unit, "minimum") != 0 || n == 0)
        return unit;
    int64_t minv = 0, maxv = r->total;
    for (size_t i = 0; i < n; i++) {
        const hs_rnode_t *nd = &r->nodes[shown[i]];
        int64_t v = nd->flat < 0 ? -nd->flat : nd->flat;
        if (v == 0)
            v = nd->cum < 0 ? -nd->cum : nd->cum;
        if (v > 0 && (minv == 0 || v < minv))
            minv = v;
    }
    if (minv == 0)
        minv = maxv;
    const char *minu = "", *maxu = "", *u;
    fmt_scale((double)minv, r->sample_unit, "minimum", &minu);
    fmt_scale((double)maxv, r->sample_unit, "minimum", &maxu);
    u = minu;
    if (strcmp(minu, maxu) != 0 && minv * 100 < maxv)
        fmt_scale((double)(100 * minv), r->sample_unit, "minimum", &u);
    return *u ? u : r->sample_unit;
}

static void fmt_time(int64_t nanos, FILE *f)
{
    static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(nanos / 1000000000);
    if (nanos % 1000000000 < 0)
        t--;
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return;
    int h = tm.tm_hour % 12 ? tm.tm_hour % 12 : 12;
    fprintf(f, "Time: %s %d, %d at %d:%02d%s (%s)\n", mon[tm.tm_mon], tm.tm_mday, tm.tm_year + 1900,
            h, tm.tm_min, tm.tm_hour < 12 ? "am" : "pm", tm.tm_zone);
}

/* filepath.Base */
static void fmt_basename(char *out, size_t len, const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    if (n == 0)
        snprintf(out, len, ".");
    else
        snprintf(out, len, "%.*s", (int)(n - b ? n - b : 1), path + (n - b ? b : 0));
}

bool hs_report_accounting_comment(const char *c)
{
    static const char *const keys[] = {"exact: ", "live samples=", "estimate: ",  "rss: ",
                                       "maps: ",  "profiler: ",    "allocator: ", "process: "};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strncmp(c, keys[i], strlen(keys[i])) == 0)
            return true;
    return false;
}

void hs_report_print_header(const hs_report_t *r, const char *out_unit, FILE *f)
{
    const hs_profile_t *p = r->first;
    char buf[4096], a[64], b[64], pb[32], pct[40];
    if (p->nmappings) {
        const char *file = hs_profile_get_str(p, p->mappings[0].filename);
        const char *bid = hs_profile_get_str(p, p->mappings[0].build_id);
        fmt_basename(buf, sizeof(buf), file);
        if (*file)
            fprintf(f, "File: %s\n", buf);
        if (*bid)
            fprintf(f, "Build ID: %s\n", bid);
    }
    for (size_t i = 0; i < r->ncomments; i++)
        if (r->comments[i][0] != '#')
            fprintf(f, "%s\n", r->comments[i]);
    fprintf(f, "Type: %s\n", r->sample_type);
    if (r->time_nanos)
        fmt_time(r->time_nanos, f);
    if (r->duration_nanos) {
        const char *unit = "";
        hs_report_label(a, sizeof(a), r->duration_nanos, "nanoseconds", "auto");
        hs_report_label(b, sizeof(b), r->total, r->sample_unit, out_unit);
        double nanos = fmt_scale((double)r->total, r->sample_unit, "nanoseconds", &unit);
        pct[0] = '\0';
        if (strcmp(unit, "ns") == 0 && nanos != 0) {
            hs_report_percent(pb, sizeof(pb), (int64_t)nanos, r->duration_nanos);
            snprintf(pct, sizeof(pct), "(%s)", pb);
        }
        fprintf(f, "Duration: %s, Total samples = %s %s\n", a, b, pct);
    }
}

/* legendActiveFilters: each cut to 80 bytes plus an ellipsis. */
void hs_report_print_filters(const hs_report_opts_t *o, FILE *f)
{
    const char *v[6] = {o->focus, o->ignore, o->hide, o->show, o->tagfocus, o->tagignore};
    static const char *k[6] = {"focus", "ignore", "hide", "show", "tagfocus", "tagignore"};
    bool any = false;
    for (int i = 0; i < 6; i++) {
        if (!v[i] || !*v[i])
            continue;
        if (!any)
            fprintf(f, "Active filters:\n");
        any = true;
        char s[256];
        snprintf(s, sizeof(s), "%s=%s", k[i], v[i]);
        if (strlen(s) > 80)
            fprintf(f, "   %.80s\xe2\x80\xa6\n", s);
        else
            fprintf(f, "   %s\n", s);
    }
}

void hs_report_xml_escape(FILE *f, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i]; i++) {
        switch (s[i]) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(s[i], f);
        }
    }
}
