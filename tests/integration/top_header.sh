#!/bin/sh
# top_header: `heapsift top` opens with pprof's header (File, Build ID, Type, Time,
# totals) and one line of heapsift's own (version, rate, unwinder, kind), not the dump's
# accounting lines, which `--comments` shows (and `heapsift stats` reads).
# usage: top_header.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" top_header
PROG=$BUILD/programs/sites
hs_need_built "$PROG"
HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" >/dev/null 2>&1
"$CLI" top "$T/p.pb.gz" | sed '/^Type:/q' >"$T/head"
want=$(printf 'File: sites\nBuild ID:\nheapsift\nType:')
got=$(sed -E 's/^(File: sites|Build ID:|heapsift|Type:).*/\1/' "$T/head")
[ "$got" = "$want" ] || { fail "top's header before Type: is not File, Build ID, one heapsift line"; show "$T/head"; }
"$CLI" top --comments "$T/p.pb.gz" | sed '/^Type:/q' >"$T/all"
for k in 'exact: allocs=' 'estimate: live_bytes=' 'rss: rss=' 'allocator: '; do
    grep -q "^$k" "$T/all" || fail "top --comments: no '$k' line"
done
[ "$FAILS" -eq 0 ] && echo "top_header: ok"
exit $((FAILS > 0))
