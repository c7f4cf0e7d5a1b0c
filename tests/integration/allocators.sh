#!/bin/sh
# allocators: heapsift preloaded in front of another allocator (Debian's jemalloc and
# tcmalloc_minimal): tests/programs/sites.c and sites_cc.cc still run, the profile is
# written, and every site's values are exact at HEAPSIFT_RATE=1 (go tool pprof -top). Skips (77) only when
# neither allocator library is installed.
# usage: allocators.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
LIB=$BUILD/libheapsift.so
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-allocators.XXXXXX")
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
for f in "$LIB" "$BUILD/programs/sites" "$BUILD/programs/sites_cc"; do
    [ -e "$f" ] || { echo "FAIL: $f not built" >&2; exit 1; }
done

# gotop FILE SAMPLE_TYPE: the -top table, values in plain bytes
gotop() {
    go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index="$2" "$1"
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

LIBDIR=/usr/lib/x86_64-linux-gnu
ran=0
for alloc in "$LIBDIR/libjemalloc.so.2" "$LIBDIR/libtcmalloc_minimal.so.4"; do
    if [ ! -e "$alloc" ]; then
        echo "note: $alloc not installed, not tested"
        continue
    fi
    ran=$((ran + 1))
    for prog in sites sites_cc; do
        name="$(basename "$alloc") $prog"
        base="$T/$(basename "$alloc").$prog"
        out="$base.pb.gz"
        rc=0
        HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB $alloc" "$BUILD/programs/$prog" \
            --expect >"$base.expect" 2>"$base.stderr" || rc=$?
        if [ $rc -ne 0 ]; then
            fail "$name: exited with status $rc (heapsift first, then $(basename "$alloc"))"
            show "$base.stderr"
            continue
        fi
        if [ ! -s "$out" ]; then
            fail "$name: no profile written"
            show "$base.stderr"
            continue
        fi
        col=3
        for st in alloc_objects alloc_space inuse_objects inuse_space; do
            if gotop "$out" $st >"$base.$st" 2>"$base.$st.err"; then
                table <"$base.$st" >"$base.$st.tab"
                compare "$name $st" "$base.expect" "$base.$st.tab" $col 0 ||
                    { fail "$name: go tool pprof -top -sample_index=$st"; show "$base.$st"; }
            else
                fail "$name: go tool pprof -top -sample_index=$st: $(head -3 "$base.$st.err")"
            fi
            col=$((col + 1))
        done
    done
done
[ $ran -gt 0 ] || { echo "SKIP: neither jemalloc nor tcmalloc_minimal is installed"; exit 77; }

if [ $FAILS -ne 0 ]; then
    echo "allocators: $FAILS check(s) failed" >&2
    exit 1
fi
echo "allocators: ok"
