#!/bin/sh
# trackers: heapsift_tracker_new / heapsift_tracker_bytes through tests/programs/tracked.c,
# whose components hold known live bytes (it prints "tracker NAME TRACKED TRUTH SAMPLES
# RANGES CI95 RC"). Checked:
#  - without the library every call returns -ENOSYS;
#  - HEAPSIFT_RATE=1: every tracker equals the truth exactly: a static function (with
#    objects allocated before its tracker existed, some freed after), a function reached
#    through three callers, a caller of it (both count the same objects), a function
#    inlined into two callers (two ranges, from DWARF only), and a function allocating
#    and freeing on another thread while its tracker is registered;
#  - each tracker equals what go tool pprof -focus=FUNCTION finds in the exit profile
#    (the same samples, read independently), and the profile's "tracker:" comment;
#  - C++ (tracked_cc): "cache::Lru::put" (both overloads), "cache::Lru::put(int, char)",
#    "cache::fill" (every instance), "cache::fill<long>", a global by its plain name, an
#    always-inline member by its qualified name (DWARF linkage names);
#  - the refusals: unknown function -ENOENT, empty name -EINVAL, bad handle -EINVAL, the
#    33rd tracker -ENOSPC;
#  - HEAPSIFT_RATE=4096: every tracker within 4 sigma of the truth, sigma bounded by
#    sqrt(rate * bytes) (docs/labels.md), and a ci95 of the half-width n samples give at
#    the rate: each sample of size s adds w s^2 (w - 1) = R^2 (x / (2 sinh(x/2)))^2 to the
#    variance (w = 1/(1 - exp(-x)), x = s/R), between R^2 at s -> 0 and 0.789 R^2 at the
#    program's largest object (7000 bytes), so the normal half-width is 1.96 R sqrt(n)
#    times 0.888..1, and ci95, the upper side of the exact Poisson interval, that plus
#    about one sample's weight (1.96 sqrt(n) + 1.95 counts: at most 1.5 / sqrt(n) more);
#    and against the truth, within 0.5..1.5 of 1.96 sqrt(R * bytes) (the most a
#    tracker's sampling variance can be, docs/labels.md), n's own noise included.
# usage: trackers.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" trackers
PROG=$BUILD/programs/tracked
hs_need_go
hs_need_built "$LIB" "$PROG"

"$PROG" >"$T/none" 2>&1 || fail "without the library: status $?"
[ "$(awk '$1 == "tracker" && $3 == -38' "$T/none" | wc -l)" -eq 5 ] &&
    [ "$(grep -c '^rc .*-38' "$T/none")" -eq 4 ] || { fail "without the library: want -ENOSYS"; show "$T/none"; }

# focus_total FILE FUNCTION: inuse_space of the samples through FUNCTION (go tool pprof).
focus_total() {
    go tool pprof -symbolize=none -top -unit=B -nodecount=0 -nodefraction=0 -focus="^$2\$" \
        -sample_index=inuse_space "$1" | sed -n 's/^Showing nodes accounting for \([0-9.]*\)B*,.*/\1/p'
}

func_of() {
    case $1 in
    static) echo comp_static ;; shared) echo comp_shared ;; outer) echo comp_outer ;;
    inline) echo comp_inl ;; race) echo comp_race ;;
    esac
}

# --- HEAPSIFT_RATE=1 --------------------------------------------------------------------
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exact.pb.gz" LD_PRELOAD="$LIB" "$PROG" >"$T/out" 2>"$T/err" ||
    { fail "rate 1: status $?"; show "$T/err"; }
[ "$(grep -c '^tracker ' "$T/out")" -eq 5 ] || { fail "rate 1: not 5 trackers"; show "$T/out"; }
while read -r _ name got want samples ranges _ rc; do
    [ "$rc" = 0 ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ] ||
        fail "rate 1: tracker $name: $got bytes (stats rc $rc), want $want"
    f=$(func_of "$name")
    theirs=$(focus_total "$T/exact.pb.gz" "$f")
    [ "$theirs" = "$got" ] || fail "rate 1: tracker $name: $got, go tool pprof -focus=$f: $theirs"
done <<EOF
$(grep '^tracker ' "$T/out")
EOF
awk '$2 == "inline" && $6 >= 2 { ok = 1 } END { exit !ok }' "$T/out" ||
    fail "rate 1: comp_inl (inlined twice) did not resolve to two ranges"
go tool pprof -symbolize=none -raw "$T/exact.pb.gz" 2>/dev/null | grep -q "tracker: name=static function=comp_static bytes=$(awk '$2 == "static" { print $4 }' "$T/out") " ||
    fail "rate 1: no 'tracker:' comment with the static tracker's bytes in the profile"
for r in "unknown -2" "empty_name -22" "bad_handle -22" "too_many -28 after 32"; do
    grep -q "^rc $r\$" "$T/out" || fail "refusal: want 'rc $r', got '$(grep "^rc ${r%% *} " "$T/out")'"
done

# C++ names (tests/programs/tracked_cc.cc): a member by its qualified name (both
# overloads), one overload by its signature, a template by its name and one instance.
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/cc.pb.gz" LD_PRELOAD="$LIB" "$BUILD/programs/tracked_cc" >"$T/cc" 2>"$T/err" ||
    { fail "C++: status $?"; show "$T/err"; }
awk '$1 == "tracker" { n++; if ($3 != $4 || $4 <= 0) { print "C++ tracker " $2 ": " $3 ", want " $4; bad++ } }
     END { exit !(n == 6 && !bad) }' "$T/cc" >&2 || { fail "C++: a tracker is not the truth"; show "$T/cc"; }

# --- HEAPSIFT_RATE=4096 ---------------------------------------------------------------
rate=4096
HEAPSIFT_RATE=$rate HEAPSIFT_SEED=3 HEAPSIFT_OUT="$T/sampled.pb.gz" LD_PRELOAD="$LIB" "$PROG" >"$T/out.s" 2>"$T/err" ||
    { fail "rate $rate: status $?"; show "$T/err"; }
awk -v r=$rate '$1 == "tracker" {
        d = $3 - $4; if (d < 0) d = -d
        x = 7000 / r; lo = 1.96 * r * sqrt($5) * x / (exp(x / 2) - exp(-x / 2)) * 0.999
        hi = 1.96 * r * sqrt($5) * (1.001 + 1.5 / sqrt($5)); tr = 1.96 * sqrt(r * $4)
        if (!(d <= 4 * sqrt(r * $4)) || !($7 >= lo && $7 <= hi) || !($7 >= 0.5 * tr && $7 <= 1.5 * tr) ||
            $8 != 0) {
            printf "rate %d: tracker %s: %s, want %s +- %.0f (4 sigma); ci95 %s, want %.0f..%.0f (%d samples) and %.0f..%.0f (truth)\n",
                   r, $2, $3, $4, 4 * sqrt(r * $4), $7, lo, hi, $5, 0.5 * tr, 1.5 * tr; bad++ }
    } END { exit bad > 0 }' "$T/out.s" >&2 || fail "rate $rate: a tracker is off by more than 4 sigma, or its ci95 is not the sampling half-width"

[ $FAILS -eq 0 ] && echo "trackers: ok"
exit $((FAILS > 0))
