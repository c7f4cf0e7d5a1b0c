#!/bin/sh
# heapsift flamegraph and collapsed on a real profile (tests/programs/sites under
# heapsift): the SVG is well-formed XML (python3's xml.etree), has its script, holds every
# function of the profile, and each frame's width is its value times one scale; the
# collapsed lines sum to the profile's total; --base gives a well-formed differential
# graph coloured only where `heapsift diff` sees a change beyond sampling noise: the same
# program with another seed is all grey (each frame's verdict attribute equal to heapsift
# diff's on that site), grow 4000 -> 6000 objects colours site_grow red and leaves
# site_steady grey, and a legend names the colours. (The verdict is diff's 95% test per
# frame, so some seed pairs do show a false alarm: over 16 pairs of sites and grow, 6 had
# one coloured frame, 6 of 224 frames; seeds 1 and 2 have none and are deterministic.)
# The browser side (hover, zoom, search) is flamegraph_browser.sh.
# Usage: flamegraph.sh BUILD_DIR SOURCE_DIR. Exits 77 when python3 is missing.
set -eu
build=$1
hs=$build/heapsift
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipping"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for seed in 1 2; do
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$tmp/p$seed.pb.gz" \
        LD_PRELOAD="$build/libheapsift.so" "$build/programs/sites" >/dev/null
done
for n in 4000 6000; do
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$n HEAPSIFT_OUT="$tmp/g$n.pb.gz" \
        LD_PRELOAD="$build/libheapsift.so" "$build/programs/grow" $n >/dev/null
done
"$hs" flamegraph -o "$tmp/fg.svg" "$tmp/p1.pb.gz"
"$hs" flamegraph --base "$tmp/p1.pb.gz" -o "$tmp/diff.svg" "$tmp/p2.pb.gz"
"$hs" flamegraph --base "$tmp/g4000.pb.gz" -o "$tmp/grew.svg" "$tmp/g6000.pb.gz"
# heapsift diff's verdict per function: "NAME VERDICT"
"$hs" diff "$tmp/p1.pb.gz" "$tmp/p2.pb.gz" | sed -n '/^ *flat /,$p' | tail -n +2 |
    awk '{print $7, $6}' >"$tmp/diff.verdicts"
"$hs" diff "$tmp/g4000.pb.gz" "$tmp/g6000.pb.gz" | sed -n '/^ *flat /,$p' | tail -n +2 |
    awk '{print $7, $6}' >"$tmp/grew.verdicts"
"$hs" collapsed "$tmp/p1.pb.gz" >"$tmp/collapsed"
"$hs" top --unit B -n 1000 "$tmp/p1.pb.gz" >"$tmp/top"
python3 - "$tmp" <<'PY'
import re, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]
ns = {"s": "http://www.w3.org/2000/svg"}
fails = []
def check(path):
    root = ET.parse(path).getroot()
    script = root.find("s:script", ns)
    if script is None or "function zoom" not in script.text or "function search" not in script.text:
        fails.append(path + ": no zoom/search script")
    frames = root.findall("s:g[@class='f']", ns)
    scale = None
    for g in frames:
        v = int(g.get("data-v"))
        w = float(g.find("s:rect", ns).get("width"))
        if scale is None:
            scale = w / v  # the root frame: all
        if abs(w - v * scale) > 0.02 + 1e-6 * w:
            fails.append("%s: %s width %g for value %d" % (path, g.get("data-n"), w, v))
    return {g.get("data-n") for g in frames}, frames
names, frames = check(tmp + "/fg.svg")
check(tmp + "/diff.svg")
top = open(tmp + "/top").read().split("\n")
start = next(i for i, l in enumerate(top) if l.lstrip().startswith("flat "))
funcs = {re.split(r"\s+", l.strip(), 5)[5] for l in top[start + 1:] if l.strip()}
missing = funcs - names
if missing:
    fails.append("functions missing from the SVG: %s" % sorted(missing))
total = int(re.search(r"of (\d+)B total", open(tmp + "/top").read()).group(1))
s = sum(int(l.rsplit(" ", 1)[1]) for l in open(tmp + "/collapsed"))
if s != total:
    fails.append("collapsed sums to %d, total is %d" % (s, total))
if int(frames[0].get("data-v")) != total:
    fails.append("root frame %s, total %d" % (frames[0].get("data-v"), total))
print("flamegraph: %d frames, %d functions, collapsed total %d" % (len(frames), len(funcs), s))

GREY = "rgb(205,205,205)"
def diffgraph(name):
    """{frame name: (verdict, fill)} of a differential SVG (names unique in these
    programs' graphs), after checking its legend and that colour follows verdict."""
    root = ET.parse("%s/%s.svg" % (tmp, name)).getroot()
    legend = "".join(root.find("s:g[@id='legend']", ns).itertext()) \
        if root.find("s:g[@id='legend']", ns) is not None else ""
    for want in ("red: grew beyond sampling noise", "blue: shrank beyond sampling noise",
                 "grey: within sampling noise"):
        if want not in legend:
            fails.append("%s.svg: legend lacks '%s': %r" % (name, want, legend))
    out = {}
    for g in root.findall("s:g[@class='f']", ns):
        v, fill = g.get("data-verdict"), g.find("s:rect", ns).get("fill")
        rgb = [int(c) for c in re.findall(r"\d+", fill)]
        ok = {"grew": rgb[0] == 255 and rgb[1] == rgb[2] < 255,
              "shrank": rgb[2] == 255 and rgb[0] == rgb[1] < 255}.get(v, fill == GREY)
        if not ok:
            fails.append("%s.svg: %s is %s but painted %s" % (name, g.get("data-n"), v, fill))
        out[g.get("data-n")] = (v, fill)
    verdicts = dict(l.split() for l in open("%s/%s.verdicts" % (tmp, name)) if l.strip())
    for site in (n for n in out if n.startswith("site_")):
        if site in verdicts and verdicts[site] != out[site][0]:
            fails.append("%s.svg: %s judged %s, heapsift diff says %s"
                         % (name, site, out[site][0], verdicts[site]))
    return out
same = diffgraph("diff")
coloured = sorted(n for n, (v, f) in same.items() if f != GREY)
if coloured:
    fails.append("same program, seeds 1 and 2: frames coloured %s" % coloured)
grew = diffgraph("grew")
if grew.get("site_grow", ("?",))[0] != "grew":
    fails.append("grow 4000 -> 6000: site_grow is %s, want grew (red)" % (grew.get("site_grow"),))
if grew.get("site_steady", ("?", ""))[1] != GREY:
    fails.append("grow 4000 -> 6000: site_steady is %s, want grey" % (grew.get("site_steady"),))
print("differential: seeds 1/2 %d frames, %d coloured; grow site_grow %s, site_steady %s"
      % (len(same), len(coloured), grew.get("site_grow"), grew.get("site_steady")))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
