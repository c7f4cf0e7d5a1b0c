/*
 * The flame graph of a built report (report.h) as a self-contained interactive SVG: one
 * rectangle per call path, width proportional to its cumulative value, roots at the
 * bottom, children by name; inline CSS and JavaScript (hover, click to zoom, search), no
 * network. For a diff report, colours show the change from the base (red grew, blue
 * shrank). Shared by `heapsift flamegraph` and the HTTP endpoint's ?display=svg and
 * flamegraph. Owns only its temporary arrays.
 */
#include "report.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FG_WIDTH 1200.0
#define FG_PAD 10.0
#define FG_FRAME 16
#define FG_TOP 40
#define FG_CHAR 7.0 /* px per character of the 12px font, for truncating labels */

typedef struct {
    const hs_report_t *r;
    const hs_rtree_t *t;
    FILE *f;
    double scale; /* px per unit of value */
    int64_t root, maxdelta;
    uint32_t maxdepth;
    bool diff;
} fg_state_t;

static const char fg_script[] =
    "var W=1200,P=10,frames,details;\n"
    "function init(){if(frames)return;frames=[].slice.call(document.querySelectorAll('g.f'));\n"
    " details=document.getElementById('details');\n"
    " frames.forEach(function(g){\n"
    "  g.addEventListener('click',function(e){zoom(g);e.stopPropagation();});\n"
    "  g.addEventListener('mouseover',function(){details.textContent=g.querySelector('title')"
    ".textContent;});\n"
    "  g.addEventListener('mouseout',function(){details.textContent=' ';});});\n"
    " document.getElementById('reset').addEventListener('click',reset);\n"
    " document.getElementById('search').addEventListener('click',search);}\n"
    "function num(g,a){return +g.getAttribute('data-'+a);}\n"
    "function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text'),"
    "n=g.getAttribute('data-n'),c=Math.floor((w-6)/7);\n"
    " r.setAttribute('x',x);r.setAttribute('width',w);t.setAttribute('x',x+3);\n"
    " t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..');}\n"
    "function zoom(z){var zx=num(z,'x'),zw=num(z,'w'),zd=num(z,'d'),s=(W-2*P)/zw,e=1e-6;\n"
    " frames.forEach(function(g){var x=num(g,'x'),w=num(g,'w'),d=num(g,'d');\n"
    "  if(d<zd&&x<=zx+e&&x+w>=zx+zw-e){g.style.display='';g.style.opacity='0.5';fit(g,P,W-2*P);}\n"
    "  else if(d>=zd&&x>=zx-e&&x+w<=zx+zw+e){g.style.display='';g.style.opacity='';"
    "fit(g,P+(x-zx)*s,w*s);}\n"
    "  else g.style.display='none';});\n"
    " document.getElementById('reset').style.opacity='1';}\n"
    "function reset(){frames.forEach(function(g){g.style.display='';g.style.opacity='';"
    "fit(g,num(g,'x'),num(g,'w'));});\n"
    " document.getElementById('reset').style.opacity='0.3';}\n"
    "function search(){var term=prompt('Search (regular expression):',''),re,m=[],sum=0,end=-1;\n"
    " frames.forEach(function(g){var r=g.querySelector('rect');"
    "if(r.hasAttribute('data-c'))r.setAttribute('fill',r.getAttribute('data-c'));});\n"
    " document.getElementById('matched').textContent=' ';\n"
    " if(!term)return;try{re=new RegExp(term);}catch(e){alert(e);return;}\n"
    " frames.forEach(function(g){if(num(g,'d')>0&&re.test(g.getAttribute('data-n'))){"
    "var r=g.querySelector('rect');\n"
    "  r.setAttribute('data-c',r.getAttribute('fill'));r.setAttribute('fill','rgb(230,0,230)');"
    "m.push(g);}});\n"
    " m.sort(function(a,b){return num(a,'x')-num(b,'x')||num(a,'d')-num(b,'d');});\n"
    " m.forEach(function(g){var "
    "x=num(g,'x');if(x>=end-1e-6){sum+=num(g,'v');end=x+num(g,'w');}});\n"
    " var root=num(frames[0],'v');\n"
    " document.getElementById('matched').textContent='Matched: '+"
    "(root?(100*sum/root).toFixed(1):0)+'%';}\n";

static void fg_escape(FILE *f, const char *s, size_t max)
{
    for (size_t i = 0; s[i] && i < max; i++) {
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
            if ((unsigned char)s[i] >= 0x20 || s[i] == '\t')
                fputc(s[i], f);
        }
    }
}

static void fg_color(const fg_state_t *st, const hs_rtree_t *n, const char *name, char *out,
                     size_t len)
{
    if (st->diff) {
        int64_t d = n->cum - n->base_cum;
        double r = st->maxdelta ? (double)(d < 0 ? -d : d) / (double)st->maxdelta : 0;
        r = r > 1 ? 1 : r;
        int v = (int)(235 - 200 * r);
        if (d > 0)
            snprintf(out, len, "rgb(255,%d,%d)", v, v);
        else
            snprintf(out, len, "rgb(%d,%d,255)", v, v);
        return;
    }
    uint32_t h = 2166136261u;
    for (const char *s = name; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    snprintf(out, len, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 230, (h >> 16) % 55);
}

static void fg_frame(const fg_state_t *st, uint32_t i, double x)
{
    const hs_rtree_t *n = &st->t[i];
    char safe[512]; /* names as valid UTF-8, so the SVG stays well-formed (utf8.h) */
    const char *name = hs_utf8_safe(i ? st->r->nodes[n->node].name : "all", safe, sizeof(safe));
    double w = (double)n->cum * st->scale, y = FG_TOP + (st->maxdepth - n->depth) * FG_FRAME;
    char v[64], pct[32], fill[40], dv[80] = "";
    hs_report_label(v, sizeof(v), n->cum, st->r->sample_unit, "minimum");
    hs_report_percent(pct, sizeof(pct), n->cum, st->root);
    if (st->diff) {
        char d[64];
        hs_report_label(d, sizeof(d), n->cum - n->base_cum, st->r->sample_unit, "minimum");
        snprintf(dv, sizeof(dv), ", %s%s", n->cum >= n->base_cum ? "+" : "", d);
    }
    fg_color(st, n, name, fill, sizeof(fill));
    fprintf(st->f,
            "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%u\" data-v=\"%" PRId64
            "\" data-n=\"",
            x, w, n->depth, n->cum);
    fg_escape(st->f, name, SIZE_MAX);
    fprintf(st->f, "\"><title>");
    fg_escape(st->f, name, SIZE_MAX);
    fprintf(st->f,
            " (%s, %s%s)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
            v, pct + strspn(pct, " "), dv, x, y, w, FG_FRAME - 1, fill, x + 3, y + 11.5);
    size_t chars = w > 6 ? (size_t)((w - 6) / FG_CHAR) : 0;
    if (chars >= 3 && strlen(name) <= chars)
        fg_escape(st->f, name, SIZE_MAX);
    else if (chars >= 3)
        fg_escape(st->f, name, hs_utf8_prefix(name, chars - 2)), fputs("..", st->f);
    fprintf(st->f, "</text></g>\n");
}

static int fg_walk(const fg_state_t *st, uint32_t i, double x)
{
    if (st->t[i].cum <= 0)
        return 0;
    fg_frame(st, i, x);
    size_t n;
    uint32_t *kids = hs_report_tree_children(st->r, st->t, i, &n);
    if (!kids)
        return -ENOMEM;
    int rc = 0;
    for (size_t k = 0; !rc && k < n; k++) {
        rc = fg_walk(st, kids[k], x);
        if (st->t[kids[k]].cum > 0)
            x += (double)st->t[kids[k]].cum * st->scale;
    }
    free(kids);
    return rc;
}

static void fg_head(const fg_state_t *st, const char *title)
{
    int h = FG_TOP + (int)(st->maxdepth + 1) * FG_FRAME + 30;
    FILE *f = st->f;
    fprintf(f,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "onload=\"init()\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            (int)FG_WIDTH, h, (int)FG_WIDTH, h);
    fprintf(f, "<style type=\"text/css\">text{font-family:Verdana,sans-serif;font-size:12px;"
               "fill:#000}g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
               "#title{font-size:17px;text-anchor:middle}.btn{cursor:pointer}</style>\n");
    fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", fg_script);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n",
            (int)FG_WIDTH, h);
    fprintf(f, "<text id=\"title\" x=\"%.0f\" y=\"24\">", FG_WIDTH / 2);
    fg_escape(f, title, SIZE_MAX);
    fprintf(f,
            "</text>\n<text id=\"reset\" class=\"btn\" x=\"%.0f\" y=\"24\" "
            "style=\"opacity:0.3\">Reset zoom</text>\n"
            "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"24\">Search</text>\n"
            "<text id=\"matched\" x=\"%.0f\" y=\"%d\"> </text>\n"
            "<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n",
            FG_PAD, FG_WIDTH - FG_PAD - 60, FG_WIDTH - FG_PAD - 120, h - 10, FG_PAD, h - 10);
}

int hs_report_flamegraph(const hs_report_t *r, bool diff, FILE *f)
{
    hs_rtree_t *t = NULL;
    long n = hs_report_tree(r, &t);
    if (n < 0)
        return -ENOMEM;
    fg_state_t st = {r, t, f, 0, t[0].cum, 0, 0, diff};
    for (long i = 1; i < n; i++) {
        int64_t d = t[i].cum - t[i].base_cum;
        if (t[i].cum > 0 && t[i].depth > st.maxdepth)
            st.maxdepth = t[i].depth;
        if (t[i].cum > 0 && (d < 0 ? -d : d) > st.maxdelta)
            st.maxdelta = d < 0 ? -d : d;
    }
    st.scale = st.root > 0 ? (FG_WIDTH - 2 * FG_PAD) / (double)st.root : 0;
    char title[256];
    snprintf(title, sizeof(title), "%s%s",
             diff ? "Differential flame graph: " : "Flame graph: ", r->sample_type);
    fg_head(&st, title);
    int rc = fg_walk(&st, 0, FG_PAD);
    fprintf(f, "</svg>\n");
    free(t);
    return rc;
}
