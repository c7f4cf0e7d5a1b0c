#!/bin/sh
# docs/images/make.sh: makes the README's picture, docs/images/flamegraph.png. Runs the
# bundled example (examples/lru_cache.c, default arguments) under `heapsift run --rate 1`
# (every allocation recorded, so the picture is the same on every run), draws its inuse_space
# flame graph with `heapsift flamegraph`, and renders that SVG with headless Chromium
# (Debian's `chromium`, which scripts/setup.sh installs) at twice its size, for sharp text.
# Usage: sh docs/images/make.sh [BUILD]   (BUILD defaults to build; run from the repository)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
for f in "$build/heapsift" "$build/lru_cache"; do
    [ -x "$f" ] || { echo "make.sh: $f not built (make all)" >&2; exit 1; }
done
command -v chromium >/dev/null || { echo "make.sh: chromium not found (make setup)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-images.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

"$build/heapsift" run -q --rate 1 -o "$tmp/lru.pb.gz" -- "$build/lru_cache" >/dev/null
"$build/heapsift" flamegraph -o "$tmp/lru.svg" "$tmp/lru.pb.gz"
# the SVG's own size, from <svg ... width="W" height="H"
size=$(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$tmp/lru.svg" | head -n 1)
[ -n "$size" ] || { echo "make.sh: no width and height in the SVG" >&2; exit 1; }
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/chrome" \
    --force-device-scale-factor=2 --window-size="$size" --screenshot="$tmp/flamegraph.png" \
    "file://$tmp/lru.svg" >"$tmp/chromium.log" 2>&1 ||
    { cat "$tmp/chromium.log" >&2; exit 1; }
cp "$tmp/flamegraph.png" "$here/flamegraph.png"
echo "make.sh: wrote $here/flamegraph.png ($(wc -c <"$here/flamegraph.png") bytes, ${size} CSS pixels at 2x)"
