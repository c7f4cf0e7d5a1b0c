#!/bin/sh
# triggers_oom: HEAPSIFT_OOM_FRACTION under an address-space limit (ulimit -v 1 GiB).
# tests/programs/trig_prog.c oom grows site_oom to 70% of RLIMIT_AS, holds, frees it all,
# holds, grows again: with the fraction at 0.6 exactly two "oom" profiles (one per
# crossing; re-armed once it dropped below), each showing site_oom holding most of the
# memory. Skipped (77) where the limit cannot be set.
# usage: triggers_oom.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" triggers-oom
PROG=$BUILD/programs/trig_prog
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }
(ulimit -v 1048576) 2>/dev/null || { echo "SKIP: cannot set RLIMIT_AS here"; exit 77; }

mkdir "$T/o"
(ulimit -v 1048576
 HEAPSIFT_OOM_FRACTION=0.6 HEAPSIFT_OUT="$T/o/t.pb.gz" LD_PRELOAD="$LIB" \
     exec timeout 60 "$PROG" oom) >"$T/out" 2>"$T/err" || fail "oom: status $?"
grep -q '^site_oom' "$T/out" || { fail "oom: the program did not run"; show "$T/out"; show "$T/err"; }
n=$(ls "$T/o" | grep -c '^t\.oom\.[0-9]*\.pb\.gz$' || true)
[ "$n" -eq 2 ] || { fail "oom: $n profiles, want 2"; ls "$T/o" >&2; show "$T/err"; }
for f in "$T"/o/t.oom.*.pb.gz; do
    [ -e "$f" ] || continue
    v=$(gotop "$f" inuse_space 2>/dev/null | table | awk -F '\t' '$1 ~ /^site_oom/ { print $2 }')
    # 60% of 1 GiB minus what the libraries and stacks take: well over 256 MiB
    awk -v v="${v:-0}" 'BEGIN { exit !(v > 268435456) }' ||
        { fail "$f: site_oom holds '${v:-nothing}', want > 256 MiB"; gotop "$f" inuse_space >"$T/top" 2>&1; show "$T/top"; }
done
[ $FAILS -eq 0 ] && echo "triggers_oom: ok"
exit $((FAILS > 0))
