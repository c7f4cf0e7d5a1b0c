#!/bin/sh
# labels: heapsift_label_set/clear through tests/programs/labeled.c, whose threads
# allocate known amounts under known labels (its --expect prints the truth per key and
# value, "-" meaning "key absent"). Only samples through site_alloc are counted, so the
# runtime's own allocations do not blur the truth. Checked:
#  - without the library every label call returns -ENOSYS;
#  - the refusals: empty key, 300-byte key, NULL value (-EINVAL), a 17th key (-E2BIG);
#  - HEAPSIFT_RATE=1: every (key, value) sum of all four sample types equals the truth,
#    read by our decoder (tests/lib/label_sums.c), `heapsift top --tags` and go tool
#    pprof -tags; the
#    "absent" sums by go tool pprof -tagignore, one value by -tagfocus (go's and ours);
#    one stack appears
#    in three samples that differ only in their labels;
#  - HEAPSIFT_RATE=4096: each inuse_space and alloc_space sum within 4 sigma of the
#    truth, sigma bounded by sqrt(rate * bytes) (docs/labels.md), through both readers;
#  - the bound: 16500 distinct sets on one thread: 16383 succeed (the empty set is the
#    16384th), 117 return -ENOSPC and their samples carry heapsift=label_sets_full, no
#    byte lost, and the bound is logged once.
# usage: labels.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" labels
SRC=$(cd "$2" && pwd)
PROG=$BUILD/programs/labeled
hs_need_go
hs_need_built "$LIB" "$PROG"
"${CC:-cc}" -std=gnu11 -O1 -I"$SRC/src/common" "$SRC/tests/lib/label_sums.c" \
    "$SRC/src/common/model/profile.c" "$SRC/src/common/model/pprof.c" "$SRC/src/common/base/gzip.c" \
    "$SRC/src/common/base/fileio.c" "$SRC/src/common/base/fdio.c" "$SRC/src/common/base/pb.c" \
    "$SRC/src/common/base/buf.c" "$SRC/src/common/base/utf8.c" -lz -o "$T/label_sums" || { echo "FAIL: cannot build label_sums" >&2; exit 1; }

"$PROG" --expect >"$T/none" 2>&1 || fail "without the library: status $?"
[ "$(grep -c '^rc .* -38$' "$T/none")" = 4 ] || { fail "without the library: want -ENOSYS"; show "$T/none"; }

# go_tags FILE SAMPLE_TYPE: "KEY VALUE SUM" per label value, from go tool pprof -tags.
# The recorder's own numeric label "lifetime" (freed objects' alloc_* values by lifetime,
# docs/formats.md; checked by lifetime_labels.sh) is not the program's: left out.
go_tags() {
    go tool pprof -symbolize=none -tags -unit=B -focus='^site_alloc$' -sample_index="$2" "$1" |
        awk '/^ *[^ ]+: Total/ { k = $1; sub(/:$/, "", k); next }
             k == "lifetime" { next }
             /\): / { v = $0; sub(/^.*\): /, "", v); n = $1; sub(/[A-Za-z]+$/, "", n)
                      printf "%s %s %.0f\n", k, v, n }'
}

# hs_tags FILE SAMPLE_TYPE: the same from `heapsift top --tags` (our CLI, same format).
hs_tags() {
    "$CLI" top --tags --unit B --focus '^site_alloc$' --sample-type "$2" "$1" |
        awk '/^ *[^ ]+: Total/ { k = $1; sub(/:$/, "", k); next }
             k == "lifetime" { next }
             /\): / { v = $0; sub(/^.*\): /, "", v); n = $1; sub(/[A-Za-z]+$/, "", n)
                      printf "%s %s %.0f\n", k, v, n }'
}

# go_total FILE SAMPLE_TYPE ARGS...: the total of the samples go tool pprof keeps.
go_total() {
    f=$1 st=$2
    shift 2
    go tool pprof -symbolize=none -top -unit=B -nodecount=0 -nodefraction=0 -focus='^site_alloc$' \
        -sample_index="$st" "$@" "$f" | sed -n 's/^Showing nodes accounting for \([0-9.]*\)B*,.*/\1/p'
}

# truth ROW_FIELD: "KEY VALUE N" from the expectations, column 4..7.
truth() {
    awk -v c="$2" '$1 == "label" && $3 != "-" { print $2, $3, $c }' "$1" | sort
}

# within EXPECTED GOT RATE: |GOT - EXPECTED| <= 4 sqrt(RATE * EXPECTED) (+0.5 for rounding)
within() {
    awk -v e="$1" -v g="$2" -v r="$3" 'BEGIN { d = g - e; if (d < 0) d = -d
        exit !(d <= 4 * sqrt(r * e) + 0.5) }'
}

# --- HEAPSIFT_RATE=1: exact -----------------------------------------------------------
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exact.pb.gz" LD_PRELOAD="$LIB" "$PROG" --expect >"$T/expect" 2>"$T/err" ||
    { fail "rate 1: status $?"; show "$T/err"; }
for r in "bad_key -22" "long_key -22" "null_value -22" "too_many -7"; do
    grep -q "^rc $r\$" "$T/expect" || fail "label_set refusal: want 'rc $r', got '$(grep "^rc ${r%% *} " "$T/expect")'"
done
grep '^label ' "$T/expect" | sort >"$T/want"
"$T/label_sums" "$T/exact.pb.gz" site_alloc tenant region | sort >"$T/ours"
cmp -s "$T/want" "$T/ours" || { fail "rate 1: our reader's label sums differ from the truth"; diff "$T/want" "$T/ours" >&2 || true; }
col=4
for st in inuse_objects inuse_space alloc_objects alloc_space; do
    truth "$T/expect" $col >"$T/want.$st"
    go_tags "$T/exact.pb.gz" $st | sort >"$T/go.$st"
    cmp -s "$T/want.$st" "$T/go.$st" ||
        { fail "rate 1: go tool pprof -tags $st differs from the truth"; diff "$T/want.$st" "$T/go.$st" >&2 || true; }
    hs_tags "$T/exact.pb.gz" $st | sort >"$T/hs.$st"
    cmp -s "$T/want.$st" "$T/hs.$st" ||
        { fail "rate 1: heapsift top --tags $st differs from the truth"; diff "$T/want.$st" "$T/hs.$st" >&2 || true; }
    for key in tenant region; do
        want=$(awk -v k=$key -v c=$col '$2 == k && $3 == "-" { print $c }' "$T/expect")
        got=$(go_total "$T/exact.pb.gz" $st -tagignore="$key=.")
        [ "$got" = "$want" ] || fail "rate 1: go tool pprof -tagignore=$key=. $st: $got, want $want"
    done
    col=$((col + 1))
done
want=$(awk '$2 == "tenant" && $3 == "acme" { print $5 }' "$T/expect")
got=$(go_total "$T/exact.pb.gz" inuse_space -tagfocus=tenant=acme)
[ "$got" = "$want" ] || fail "rate 1: -tagfocus=tenant=acme: $got, want $want"
ours=$("$CLI" top --unit B --focus '^site_alloc$' --tagfocus tenant=acme "$T/exact.pb.gz" |
    sed -n 's/^Showing nodes accounting for \([0-9.]*\)B*,.*/\1/p')
[ "$ours" = "$want" ] || fail "rate 1: heapsift top --tagfocus tenant=acme: $ours, want $want"
# mixed's three phases: one location list, three samples, three label sets.
go tool pprof -symbolize=none -raw "$T/exact.pb.gz" | awk '
    /^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
    on && /: [0-9 ]+$/ { st = $0; sub(/^.*: /, "", st); n[st]++ }
    END { for (s in n) if (n[s] >= 3) found = 1; exit !found }' ||
    fail "rate 1: no stack appears in three samples differing only in labels"

# --- HEAPSIFT_RATE=4096: within the sampling error -------------------------------------
rate=4096
HEAPSIFT_RATE=$rate HEAPSIFT_SEED=7 HEAPSIFT_OUT="$T/sampled.pb.gz" LD_PRELOAD="$LIB" "$PROG" >/dev/null 2>"$T/err" ||
    { fail "rate $rate: status $?"; show "$T/err"; }
"$T/label_sums" "$T/sampled.pb.gz" site_alloc tenant region >"$T/ours.sampled"
for st in inuse_space:5 alloc_space:7; do
    name=${st%:*} c=${st#*:}
    go_tags "$T/sampled.pb.gz" "$name" >"$T/go.s.$name"
    while read -r _ key value _; do
        want=$(awk -v k="$key" -v v="$value" -v c="$c" '$2 == k && $3 == v { print $c }' "$T/want")
        ours=$(awk -v k="$key" -v v="$value" -v c="$c" '$2 == k && $3 == v { print $c }' "$T/ours.sampled")
        within "$want" "${ours:-0}" $rate || fail "rate $rate: ours $key=$value $name: $ours, want $want +- 4 sigma"
        [ "$value" = - ] && continue
        theirs=$(awk -v k="$key" -v v="$value" '$1 == k && $2 == v { print $3 }' "$T/go.s.$name")
        within "$want" "${theirs:-0}" $rate || fail "rate $rate: go $key=$value $name: $theirs, want $want +- 4 sigma"
    done <"$T/want"
done

# --- the bound on label sets -----------------------------------------------------------
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/over.pb.gz" LD_PRELOAD="$LIB" "$PROG" --overflow 16500 >"$T/over" 2>"$T/over.err" ||
    { fail "overflow: status $?"; show "$T/over.err"; }
[ "$(cat "$T/over")" = "overflow 16383 117" ] || fail "overflow: '$(cat "$T/over")', want 'overflow 16383 117'"
[ "$(grep -c 'label sets' "$T/over.err")" = 1 ] || { fail "overflow: the bound is not logged exactly once"; show "$T/over.err"; }
go_tags "$T/over.pb.gz" inuse_space >"$T/go.over"
[ "$(awk '$1 == "heapsift" && $2 == "label_sets_full" { print $3 }' "$T/go.over")" = $((117 * 1024)) ] ||
    fail "overflow: heapsift=label_sets_full does not hold 117 x 1024 bytes"
[ "$(awk '$1 == "tenant"' "$T/go.over" | wc -l)" -eq 16383 ] || fail "overflow: not 16383 tenant values"
"$T/label_sums" "$T/over.pb.gz" site_alloc tenant | awk '{ s += $5 } END { print s }' >"$T/over.sum"
[ "$(cat "$T/over.sum")" = $((16500 * 1024)) ] || fail "overflow: $(cat "$T/over.sum") bytes, want $((16500 * 1024)): samples lost"

[ $FAILS -eq 0 ] && echo "labels: ok"
exit $((FAILS > 0))
