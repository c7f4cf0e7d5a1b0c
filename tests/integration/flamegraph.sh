#!/bin/sh
# heapsift flamegraph and collapsed on a real profile (tests/programs/sites under
# heapsift): the SVG is well-formed XML (python3's xml.etree), has its script, holds every
# function of the profile, and each frame's width is its value times one scale; the
# collapsed lines sum to the profile's total; --base gives a well-formed differential
# graph. Usage: flamegraph.sh BUILD_DIR SOURCE_DIR. Exits 77 when python3 is missing.
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
"$hs" flamegraph -o "$tmp/fg.svg" "$tmp/p1.pb.gz"
"$hs" flamegraph --base "$tmp/p1.pb.gz" -o "$tmp/diff.svg" "$tmp/p2.pb.gz"
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
    frames = root.findall("s:g", ns)
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
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
