#!/bin/sh
# sites_sampled: tests/programs/sites.c profiled at HEAPSIFT_RATE=4096 with a fixed
# HEAPSIFT_SEED: each site's inuse_space and alloc_space estimates (the unbiased, sampled
# values) must lie within 10% of the truth the program reports, through `go tool pprof -top`
# and through `heapsift top`. With ~4000 objects of 4096 bytes per site the relative standard
# error is about 1.2% (site_small: 200000 x 64 bytes, about 1.8%), so 10% is > 5 sigma.
# usage: sites_sampled.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
LIB=$BUILD/libheapsift.so
CLI=$BUILD/heapsift
PROG=$BUILD/programs/sites
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-sites-sampled.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
export HOME="${HOME:-$T}"
FAILS=0
fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}
# show FILE: the first lines of an output, indented, on stderr
show() {
    head -n "${2:-40}" "$1" | sed 's/^/    | /' >&2
}
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }
for f in "$LIB" "$CLI" "$PROG"; do
    [ -e "$f" ] || { echo "FAIL: $f not built" >&2; exit 1; }
done

# gotop FILE SAMPLE_TYPE / hstop FILE SAMPLE_TYPE: the -top table, values in plain bytes
gotop() {
    go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index="$2" "$1"
}
hstop() {
    "$CLI" top "$1" --sample-type "$2" --unit B
}
# table: pprof -top text on stdin -> "NAME<TAB>FLAT<TAB>CUM" (values without the unit);
# "Dropped N nodes (cum <= X)" becomes a row "<dropped> X X"
table() {
    awk '/^ *flat +flat% +sum% +cum +cum%/ { on = 1; next }
        /^Dropped [0-9]+ nodes \(cum <= [0-9.]+B?\)/ {
            t = $0; sub(/^.*cum <= /, "", t); sub(/B?\).*$/, "", t)
            printf "<dropped>\t%s\t%s\n", t, t
        }
        on && NF >= 6 {
            name = $0; f = $1; c = $4
            sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
            sub(/B$/, "", f); sub(/B$/, "", c)
            printf "%s\t%s\t%s\n", name, f, c
        }'
}
# compare LABEL EXPECT TABLE COLUMN TOL: COLUMN 3..6 of EXPECT (alloc_objects, alloc_space,
# inuse_objects, inuse_space) against TABLE's flat or cum; TOL 0 = exact, else a fraction.
# A name matches "NAME" or "NAME(args)". Expected 0, or at most the table's dropped-nodes
# threshold, also accepts an absent row.
compare() {
    awk -F '\t' -v label="$1" -v col="$4" -v tol="$5" '
        NR == FNR { n = split($0, e, " "); if (n >= 6) { want[e[1]] = e[col]; kind[e[1]] = e[2] }
                    next }
        $1 == "<dropped>" { thr = $2 + 0; next }
        { fl[$1] = $2; cu[$1] = $3; names[++nn] = $1 }
        END {
            bad = 0
            for (w in want) {
                found = ""
                for (i = 1; i <= nn; i++) {
                    nm = names[i]
                    if (nm == w || substr(nm, 1, length(w) + 1) == w "(") { found = nm; break }
                }
                ex = want[w] + 0
                if (found == "") {
                    if (ex != 0 && !(ex > 0 && ex <= thr)) {
                        printf "%s: %s: missing from the table (want %s %s)\n", label, w,
                               kind[w], want[w]; bad++ }
                    continue
                }
                got = (kind[w] == "cum" ? cu[found] : fl[found]) + 0
                if (ex < 0) {
                    if (got <= 0) { printf "%s: %s: %s is %s, want > 0\n", label, w, kind[w],
                                    got; bad++ }
                    continue
                }
                d = got - ex; if (d < 0) d = -d
                if ((tol == 0 && d != 0) || (tol > 0 && d > tol * ex) ||
                    (tol > 0 && ex == 0 && got != 0))
                    { printf "%s: %s: %s = %s, want %s%s\n", label, w, kind[w], got, ex,
                      (tol > 0 ? " (+-" tol * 100 "%)" : ""); bad++ }
            }
            exit bad > 0
        }' "$2" "$3" >&2
}

HEAPSIFT_RATE=4096 HEAPSIFT_SEED=12345 HEAPSIFT_OUT="$T/sites.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" --expect >"$T/expect" 2>"$T/stderr" ||
    { rc=$?; cat "$T/stderr" >&2; echo "FAIL: sites exited with status $rc" >&2; exit 1; }
[ -s "$T/sites.pb.gz" ] || { cat "$T/stderr" >&2; echo "FAIL: no profile at $T/sites.pb.gz" >&2; exit 1; }
[ -s "$T/expect" ] || { echo "FAIL: sites printed no expectations" >&2; exit 1; }

for st in alloc_space inuse_space; do
    col=$([ $st = inuse_space ] && echo 6 || echo 4)
    if gotop "$T/sites.pb.gz" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
        table <"$T/go.$st" >"$T/go.$st.tab"
        compare "go pprof $st" "$T/expect" "$T/go.$st.tab" "$col" 0.1 ||
            { fail "go tool pprof -top -sample_index=$st at rate 4096"; show "$T/go.$st"; }
    else
        fail "go tool pprof -top -sample_index=$st: $(head -3 "$T/go.$st.err")"
    fi
    if hstop "$T/sites.pb.gz" $st >"$T/hs.$st" 2>"$T/hs.$st.err"; then
        table <"$T/hs.$st" >"$T/hs.$st.tab"
        [ -s "$T/hs.$st.tab" ] || { fail "heapsift top --sample-type $st: no table"; show "$T/hs.$st"; }
        compare "heapsift top $st" "$T/expect" "$T/hs.$st.tab" "$col" 0.1 ||
            { fail "heapsift top --sample-type $st at rate 4096"; show "$T/hs.$st"; }
    else
        fail "heapsift top --sample-type $st: status $?: $(head -3 "$T/hs.$st.err")"
    fi
done

# The period is the rate: `go tool pprof -raw` prints "Period: 4096".
if go tool pprof -symbolize=none -raw "$T/sites.pb.gz" >"$T/raw" 2>&1; then
    grep -q '^Period: 4096$' "$T/raw" || { fail "period is not 4096"; show "$T/raw" 5; }
else
    fail "go tool pprof -raw: $(head -3 "$T/raw")"
fi

if [ $FAILS -ne 0 ]; then
    echo "sites_sampled: $FAILS check(s) failed" >&2
    exit 1
fi
echo "sites_sampled: ok"
