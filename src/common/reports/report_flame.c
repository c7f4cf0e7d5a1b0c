/*
 * The flame graph of a built report (report.h) as a self-contained interactive SVG: one
 * rectangle per call path, width proportional to its cumulative value, roots at the
 * bottom, children by name; inline CSS and JavaScript (hover, click to zoom, search), no
 * network. For a diff report, colours show the change from the base where `heapsift diff`
 * would call it beyond sampling noise (red grew, blue shrank; grey otherwise). Shared by
 * `heapsift flamegraph` and the HTTP endpoint's ?display=svg and flamegraph. Owns only its
 * temporary arrays.
 */
#include "report.h"
#include "base/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FG_WIDTH 1200.0
#define FG_PAD 10.0
#define FG_FRAME 16
#define FG_TOP 40
#define FG_CHAR 7.0  /* px per character of the 12px font, for truncating labels */
#define FG_GREY 205  /* a diff's frames within sampling noise */
#define FG_LEGEND 20 /* px below the frames for a diff's legend */

typedef struct {
    const hs_report_t *r;
    const hs_rtree_t *t;
    FILE *f;
    double scale; /* px per unit of value */
    int64_t root, maxdelta;
    uint32_t maxdepth;
    bool diff;
} fg_state_t;

/* Everything inside one closure behind the global hsFlame: a top-level `var frames` would be
 * window.frames (always truthy, length 0), which is what kept the frame list empty. init()
 * may run before the frames are parsed (an inline SVG's onload), so it only counts as done
 * once it found them; the HTML page calls it again at the end. The frames are in pre-order
 * (fg_walk), so zoom and search find a frame's subtree and ancestors by depth alone, not by
 * comparing the rounded data-x and data-w (which hid descendants and split the matched share
 * when the rounding went the wrong way). */
static const char fg_script[] =
    "var hsFlame=(function(){var W=1200,P=10,fs=null,det,rst,mat;\n"
    "function num(g,a){return +g.getAttribute('data-'+a);}\n"
    "function init(){if(fs)return;var a=[].slice.call(document.querySelectorAll('g.f'));\n"
    " if(!a.length)return;fs=a;det=document.getElementById('details');\n"
    " rst=document.getElementById('reset');mat=document.getElementById('matched');\n"
    " fs.forEach(function(g){\n"
    "  g.addEventListener('click',function(e){zoom(g);e.stopPropagation();});\n"
    "  g.addEventListener('mouseover',function(){det.textContent=g.querySelector('title')"
    ".textContent;});\n"
    "  g.addEventListener('mouseout',function(){det.textContent=' ';});});\n"
    " rst.addEventListener('click',reset);\n"
    " document.getElementById('search').addEventListener('click',function(){search();});\n"
    " document.addEventListener('keydown',function(e){\n"
    "  if((e.ctrlKey&&e.key=='f')||e.key=='/'){e.preventDefault();search();}\n"
    "  else if(e.key=='Escape')reset();});}\n"
    "function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text'),"
    "n=g.getAttribute('data-n'),c=Math.floor((w-6)/7);\n"
    " r.setAttribute('x',x);r.setAttribute('width',w);t.setAttribute('x',x+3);\n"
    " t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..');}\n"
    "function zoom(z){var i=fs.indexOf(z),zx=num(z,'x'),zd=num(z,'d'),s=(W-2*P)/num(z,'w'),"
    "j,d,up=zd;\n"
    " fs.forEach(function(g){g.style.display='none';});\n"
    " for(j=i;j<fs.length&&(j==i||num(fs[j],'d')>zd);j++){var g=fs[j];g.style.display='';"
    "g.style.opacity='';fit(g,P+(num(g,'x')-zx)*s,num(g,'w')*s);}\n"
    " for(j=i-1;j>=0&&up>0;j--)if((d=num(fs[j],'d'))<up){up=d;fs[j].style.display='';"
    "fs[j].style.opacity='0.5';fit(fs[j],P,W-2*P);}\n"
    " rst.style.opacity=zd?'1':'0.3';}\n"
    "function reset(){fs.forEach(function(g){g.style.display='';g.style.opacity='';"
    "fit(g,num(g,'x'),num(g,'w'));});\n"
    " rst.style.opacity='0.3';}\n"
    "function search(term){var re,hit=[],sum=0,cut=1e9;\n"
    " if(term===undefined)term=prompt('Search (regular expression):','');\n"
    " fs.forEach(function(g){var r=g.querySelector('rect');"
    "if(r.hasAttribute('data-c')){r.setAttribute('fill',r.getAttribute('data-c'));"
    "r.removeAttribute('data-c');}});\n"
    " mat.textContent=' ';\n"
    " if(!term)return;try{re=new RegExp(term);}catch(e){alert(e);return;}\n"
    " fs.forEach(function(g,k){if(num(g,'d')>0&&re.test(g.getAttribute('data-n'))){"
    "var r=g.querySelector('rect');\n"
    "  r.setAttribute('data-c',r.getAttribute('fill'));r.setAttribute('fill','rgb(230,0,230)');"
    "hit[k]=1;}});\n"
    " fs.forEach(function(g,k){var d=num(g,'d');if(d<=cut)cut=1e9;"
    "if(cut==1e9&&hit[k]){sum+=num(g,'v');cut=d;}});\n"
    " var root=num(fs[0],'v');\n"
    " mat.textContent='Matched: '+(root?(100*sum/root).toFixed(1):0)+'%';}\n"
    "return {init:init,zoom:zoom,reset:reset,search:search};})();\n";

/* A frame's change judged as `heapsift diff` judges a row's (hs_report_tree_verdict: the
 * few-sample test of cum against base_cum), so the graph colours nothing the diff table
 * calls noise. */
static hs_verdict_t fg_verdict(const fg_state_t *st, const hs_rtree_t *n)
{
    return hs_report_tree_verdict(st->r, n);
}

/* Diff colours: red grew, blue shrank, beyond noise only, at least 30% saturated so a
 * small real change still shows, fully at the largest one; grey within noise or same. */
static void fg_color(const fg_state_t *st, const hs_rtree_t *n, const char *name, char *out,
                     size_t len)
{
    if (st->diff) {
        int64_t d = n->cum - n->base_cum;
        hs_verdict_t v = fg_verdict(st, n);
        double r = st->maxdelta ? (double)(d < 0 ? -d : d) / (double)st->maxdelta : 1;
        int c = (int)(230 - 200 * (0.3 + 0.7 * (r > 1 ? 1 : r)));
        if (v == HS_GREW)
            snprintf(out, len, "rgb(255,%d,%d)", c, c);
        else if (v == HS_SHRANK)
            snprintf(out, len, "rgb(%d,%d,255)", c, c);
        else
            snprintf(out, len, "rgb(%d,%d,%d)", FG_GREY, FG_GREY, FG_GREY);
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
    char v[64], pct[32], fill[40], dv[96] = "";
    hs_report_label(v, sizeof(v), n->cum, st->r->sample_unit, "minimum");
    hs_report_percent(pct, sizeof(pct), n->cum, st->root);
    if (st->diff) {
        char d[64];
        hs_report_label(d, sizeof(d), n->cum - n->base_cum, st->r->sample_unit, "minimum");
        snprintf(dv, sizeof(dv), ", %s%s %s", n->cum >= n->base_cum ? "+" : "", d,
                 hs_report_verdict_name(fg_verdict(st, n)));
    }
    fg_color(st, n, name, fill, sizeof(fill));
    fprintf(st->f,
            "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%u\" data-v=\"%" PRId64
            "\"%s%s%s data-n=\"",
            x, w, n->depth, n->cum, st->diff ? " data-verdict=\"" : "",
            st->diff ? hs_report_verdict_name(fg_verdict(st, n)) : "", st->diff ? "\"" : "");
    hs_report_xml_escape(st->f, name, SIZE_MAX);
    fprintf(st->f, "\"><title>");
    hs_report_xml_escape(st->f, name, SIZE_MAX);
    fprintf(st->f,
            " (%s, %s%s)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
            v, pct + strspn(pct, " "), dv, x, y, w, FG_FRAME - 1, fill, x + 3, y + 11.5);
    size_t chars = w > 6 ? (size_t)((w - 6) / FG_CHAR) : 0;
    if (chars >= 3 && strlen(name) <= chars)
        hs_report_xml_escape(st->f, name, SIZE_MAX);
    else if (chars >= 3)
        hs_report_xml_escape(st->f, name, hs_utf8_prefix(name, chars - 2)), fputs("..", st->f);
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

/* The key to a diff's colours, one line at baseline y. */
static void fg_legend(FILE *f, int y)
{
    static const struct {
        const char *fill, *what;
    } keys[] = {
        {"rgb(255,100,100)", "red: grew beyond sampling noise"},
        {"rgb(100,100,255)", "blue: shrank beyond sampling noise"},
        {"rgb(205,205,205)",
         "grey: within sampling noise (|change| &lt; 1.96 sd, as heapsift diff)"},
    };
    double x = FG_PAD;
    fprintf(f, "<g id=\"legend\">");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        fprintf(f,
                "<rect x=\"%.0f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.0f\" y=\"%d\">%s</text>",
                x, y - 10, keys[i].fill, x + 16, y, keys[i].what);
        x += 16 + FG_CHAR * (double)strlen(keys[i].what) + 24;
    }
    fprintf(f, "</g>\n");
}

static void fg_head(const fg_state_t *st, const char *title)
{
    int h = FG_TOP + (int)(st->maxdepth + 1) * FG_FRAME + 30 + (st->diff ? FG_LEGEND : 0);
    FILE *f = st->f;
    fprintf(f,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "onload=\"hsFlame.init()\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            (int)FG_WIDTH, h, (int)FG_WIDTH, h);
    fprintf(f, "<style type=\"text/css\">text{font-family:Verdana,sans-serif;font-size:12px;"
               "fill:#000}g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
               "#title{font-size:17px;text-anchor:middle}.btn{cursor:pointer}</style>\n");
    fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", fg_script);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n",
            (int)FG_WIDTH, h);
    fprintf(f, "<text id=\"title\" x=\"%.0f\" y=\"24\">", FG_WIDTH / 2);
    hs_report_xml_escape(f, title, SIZE_MAX);
    fprintf(f,
            "</text>\n<text id=\"reset\" class=\"btn\" x=\"%.0f\" y=\"24\" "
            "style=\"opacity:0.3\">Reset zoom</text>\n"
            "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"24\">Search</text>\n"
            "<text id=\"matched\" x=\"%.0f\" y=\"%d\"> </text>\n"
            "<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n",
            FG_PAD, FG_WIDTH - FG_PAD - 60, FG_WIDTH - FG_PAD - 120, h - 10, FG_PAD, h - 10);
    if (st->diff)
        fg_legend(f, h - 10 - FG_LEGEND);
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
        hs_verdict_t v = fg_verdict(&st, &t[i]);
        if (t[i].cum > 0 && (v == HS_GREW || v == HS_SHRANK) && (d < 0 ? -d : d) > st.maxdelta)
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
