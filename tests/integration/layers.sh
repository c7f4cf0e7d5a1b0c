#!/bin/sh
# layers: the source tree keeps its layering (scripts/layers.py, src/LAYERS and each
# tree's LAYERS). First the checker is run on a scratch tree with known breaches, each
# of which it must name: an include of a folder above, of a peer, of a tree it may not
# use, a file outside any folder, and calls up, one declared by hand (no include: seen
# only in the object files). A checker that accepts everything fails here. Then the real
# tree and its build must pass, with every tree's folders in use, and every source path
# named in the repository must exist.
# Usage: layers.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" layers
SRC=$(cd "$2" && pwd)
CHECK="python3 $SRC/scripts/layers.py"

# 1. The scratch tree: common < preload, cli; preload's low < high and peer1 peer2.
k=$T/k
mkdir -p "$k/src/common/base" "$k/src/preload/low" "$k/src/preload/high" \
    "$k/src/preload/peer1" "$k/src/preload/peer2" "$k/src/cli/verbs"
printf '# trees\ncommon\npreload cli\n' >"$k/src/LAYERS"
echo base >"$k/src/common/LAYERS"
printf 'low\nhigh\npeer1 peer2\n' >"$k/src/preload/LAYERS"
echo verbs >"$k/src/cli/LAYERS"
echo 'int hs_base(void);' >"$k/src/common/base/b.h"
echo 'int hs_low(void);' >"$k/src/preload/low/l.h"
echo 'int hs_up(void);' >"$k/src/preload/high/h.h"
echo 'int hs_p2(void);' >"$k/src/preload/peer2/p2.h"
cat >"$k/src/preload/low/l.c" <<'EOF'
#include "l.h"
#include "base/b.h"
#include "high/h.h"
int hs_low(void) { return hs_base() + hs_up(); }
EOF
cat >"$k/src/preload/low/l2.c" <<'EOF'
int hs_up(void);
int hs_low2(void) { return hs_up(); }
EOF
cat >"$k/src/preload/high/h.c" <<'EOF'
#include "low/l.h"
#include "high/h.h"
int hs_up(void) { return hs_low(); }
EOF
cat >"$k/src/preload/peer1/p1.c" <<'EOF'
#include "high/h.h"
#include "peer2/p2.h"
int hs_p1(void) { return hs_up() + hs_p2(); }
EOF
echo 'int hs_p2(void) { return 2; }' >"$k/src/preload/peer2/p2.c"
echo '#include "low/l.h"' >"$k/src/cli/verbs/v.c"
echo 'int hs_base(void) { return 1; }' >"$k/src/common/base/b.c"
echo 'int stray;' >"$k/src/preload/stray.c"
# The object files where a CMake build keeps them.
for f in preload/low/l.c preload/low/l2.c preload/high/h.c preload/peer1/p1.c \
    preload/peer2/p2.c common/base/b.c; do
    case $f in common/*) t=hs_common.dir ;; *) t=hs_core.dir ;; esac
    o=$k/b/CMakeFiles/$t/src/$f.o
    mkdir -p "$(dirname "$o")"
    cc -c -I"$k/src/common" -I"$k/src/preload" "$k/src/$f" -o "$o"
done
rc=0
$CHECK "$k" "$k/b" 2>"$T/out" || rc=$?
[ $rc -eq 1 ] || fail "the checker exited $rc on the scratch tree (1 expected)"
for want in \
    'src/preload/low/l.c:3: includes src/preload/high/h.h: preload/low may not use preload/high, above it (src/preload/LAYERS)' \
    'src/preload/peer1/p1.c:2: includes src/preload/peer2/p2.h: preload/peer1 may not use preload/peer2, a peer (src/preload/LAYERS)' \
    'src/cli/verbs/v.c:1: includes src/preload/low/l.h: tree cli may not use tree preload (src/LAYERS)' \
    'src/preload/stray.c: not in a folder of src/preload/LAYERS' \
    'src/preload/low/l2.c: uses hs_up of src/preload/high/h.c: preload/low may not use preload/high, above it (src/preload/LAYERS)' \
    'src/preload/low/l.c: uses hs_up of src/preload/high/h.c: preload/low may not use preload/high, above it (src/preload/LAYERS)' \
    'src/preload/peer1/p1.c: uses hs_p2 of src/preload/peer2/p2.c: preload/peer1 may not use preload/peer2, a peer (src/preload/LAYERS)'; do
    grep -qxF "layers: $want" "$T/out" || fail "the checker did not say: $want"
done
# Each breach is named by each reading that sees it, and nothing else is: the allowed
# uses (low of common, high of low, peer1 of high) are not reported.
n=$(grep -c '^layers: ' "$T/out" || true)
[ "$n" -eq 7 ] || { fail "the checker printed $n lines (7 expected)"; show "$T/out"; }

# 2. A bad configuration is an error of its own (status 2), not a pass.
rm "$k/src/cli/LAYERS"
rc=0
$CHECK "$k" 2>"$T/out2" || rc=$?
[ $rc -eq 2 ] && grep -q 'src/cli/LAYERS: missing' "$T/out2" ||
    { fail "a missing LAYERS gave status $rc"; show "$T/out2"; }

# 3. The real tree and its build.
BUILT=$(cd "$1" && pwd)
$CHECK "$SRC" "$BUILT" 2>"$T/real" || { fail "the source tree breaks its layering"; show "$T/real" 60; }
$CHECK --graph "$SRC" "$BUILT" >"$T/graph" 2>/dev/null || true
for tree in common preload cli; do
    nf=$(grep -cv '^\s*\(#\|$\)' "$SRC/src/$tree/LAYERS" || true)
    [ "$nf" -ge 2 ] || fail "src/$tree/LAYERS lists $nf levels: the tree is not grouped"
done

# 4. Every source path the repository's files name (docs, scripts, tests, comments)
# exists: a file moved between folders leaves no stale reference behind. bench/history
# is a record of past runs and keeps the paths of its day; this script names the scratch
# tree's files above, which are not the repository's.
(cd "$SRC" && git grep -ohE 'src/(preload|common|cli)/[A-Za-z0-9_/.-]+\.(c|h|cmake|html|js|css)\b' \
    -- . ':!bench/history' ':!tests/integration/layers.sh' | sort -u) >"$T/named"
while read -r p; do
    [ -e "$SRC/$p" ] || fail "$p is named in the repository but does not exist"
done <"$T/named"
[ "$(wc -l <"$T/named")" -ge 50 ] || fail "only $(wc -l <"$T/named") source paths named: the grep broke"

[ "$FAILS" -eq 0 ] || exit 1
echo "layers: 7 known breaches named; the tree passes ($(wc -l <"$T/graph") edges between folders); $(wc -l <"$T/named") source paths named, all exist"
