#!/bin/sh
# labels_trackers: labels and trackers under concurrency (tests/programs/stress_labels.c):
# 8 threads switching among 40 tenant label sets (interned from many threads at once) and
# a second key, allocating and freeing under a tracked function while the main thread
# registers two trackers and dumps. At HEAPSIFT_RATE=1 the exit profile's live bytes per
# tenant (samples through stress_site, our decoder) and both trackers must equal what the
# program counted: a sample counted twice or missed by a tracker registered mid-run, or
# a label set mixed up between threads, shows. The mid-run dump must be a valid profile.
# usage: labels_trackers.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" labels-trackers stress_labels
SRC=$(cd "$2" && pwd)
"${CC:-cc}" -std=gnu11 -O1 -I"$SRC/src/common" "$SRC/tests/lib/label_sums.c" \
    "$SRC/src/common/model/profile.c" "$SRC/src/common/model/pprof.c" "$SRC/src/common/base/gzip.c" \
    "$SRC/src/common/base/fileio.c" "$SRC/src/common/base/fdio.c" "$SRC/src/common/base/pb.c" \
    "$SRC/src/common/base/buf.c" "$SRC/src/common/base/utf8.c" -lz -o "$T/label_sums" || { echo "FAIL: cannot build label_sums" >&2; exit 1; }

if bounded 120 run env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" \
    "$BUILD/programs/stress_labels" "$T" >"$T/out" 2>"$T/err"; then
    valid "$T/exit.pb.gz" exit || true
    valid "$T/mid.pb.gz" mid-run || true
    "$T/label_sums" "$T/exit.pb.gz" stress_site tenant >"$T/sums"
    awk 'NR == FNR { if ($1 == "label" && $3 != "-") got[$3] = $5; next }
         $1 == "label" && $4 != 0 { n++; if (got[$3] != $4) { print "tenant " $3 ": " got[$3] + 0 ", want " $4; bad++ } }
         END { exit !(n >= 8 && !bad) }' "$T/sums" "$T/out" >&2 ||
        fail "live bytes per tenant differ from the program's count"
    awk '$1 == "tracker" { n++; if ($3 != $4) { print "tracker " $2 ": " $3 ", want " $4; bad++ } }
         END { exit !(n == 2 && !bad) }' "$T/out" >&2 || fail "a tracker differs from the program's count"
else
    fail "stress_labels: status $RC"
    show "$T/err" 5
fi
finish
