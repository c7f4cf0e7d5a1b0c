#!/bin/sh
# debian_libs: stacks that pass through Debian's own glibc, which is built without frame
# pointers: allocations made by strdup, getline and fopen on the program's behalf, and by a
# qsort comparator that glibc calls back (tests/programs/sites.c, mode "libc"), at
# HEAPSIFT_RATE=1, with the default unwinder and each DWARF-based one (libunwind, libgcc).
# The program's calling function must appear above the libc frame, values must be exact, and
# main must be above every site.
# usage: debian_libs.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
LIB=$BUILD/libheapsift.so
PROG=$BUILD/programs/sites
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-debian-libs.XXXXXX")
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
for f in "$LIB" "$PROG"; do
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
# traces FILE [keep]: `go tool pprof -traces` -> one line per sample, frames leaf first,
# ";"-joined; inlined frames lose their " (inline)" mark unless "keep" is given.
traces() {
    go tool pprof -symbolize=none -traces -sample_index=alloc_space "$1" | awk -v keep="${2:-}" '
        function flush() { if (st != "") print st; st = "" }
        function clean(s) { if (keep == "") sub(/ \(inline\)$/, "", s); return s }
        /^-+\+-+/ { flush(); on = 1; next }
        !on || $1 ~ /:$/ { next }
        substr($0, 1, 13) ~ /^ +$/ { st = st ";" clean(substr($0, 14)); next }
        NF >= 2 { nm = $0; sub(/^ *[^ ]+ +/, "", nm); flush(); st = clean(nm) }
        END { flush() }'
}
# heapsift_frames FILE: prints the profile's locations that lie in libheapsift.so's mapping
# (`go tool pprof -raw`); nothing when there are none.
heapsift_frames() {
    go tool pprof -symbolize=none -raw "$1" | awk '
        /^Locations/ { sec = "loc"; next }
        /^Mappings/ { sec = "map"; next }
        sec == "loc" && $2 ~ /^0x/ { m = $3; sub(/^M=/, "", m); locmap[$0] = m }
        sec == "map" && $1 ~ /^[0-9]+:$/ && /libheapsift/ { id = $1; sub(/:$/, "", id); hs[id] = 1 }
        END { for (l in locmap) if (locmap[l] in hs) print l }'
}

for unwind in default libunwind libgcc; do
    out="$T/libc.$unwind.pb.gz"
    rc=0
    if [ $unwind = default ]; then
        HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" libc --expect \
            >"$T/expect" 2>"$T/stderr" || rc=$?
    else
        HEAPSIFT_UNWIND=$unwind HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" \
            libc --expect >"$T/expect" 2>"$T/stderr" || rc=$?
    fi
    if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
        fail "$unwind unwinder: sites libc: status $rc, profile $([ -s "$out" ] && echo written || echo missing)"
        show "$T/stderr" 5
        continue
    fi
    for st in inuse_space alloc_objects; do
        col=$([ $st = inuse_space ] && echo 6 || echo 3)
        if gotop "$out" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
            table <"$T/go.$st" >"$T/go.$st.tab"
            compare "$unwind unwinder, $st" "$T/expect" "$T/go.$st.tab" "$col" 0 ||
                { fail "$unwind unwinder: go tool pprof -top -sample_index=$st"; show "$T/go.$st"; }
        else
            fail "$unwind unwinder: go tool pprof -top: $(head -3 "$T/go.$st.err")"
        fi
    done
    if ! traces "$out" >"$T/traces" 2>"$T/traces.err"; then
        fail "$unwind unwinder: go tool pprof -traces: $(head -3 "$T/traces.err")"
        continue
    fi
    # site_strdup/site_getline/site_fopen: never the leaf (glibc's function is), main above.
    # cmp_alloc: the leaf, with glibc's qsort frames, then site_qsort, then main above it.
    awk -F ';' '
        function base(s) { sub(/\(.*$/, "", s); return s }
        function has_main(from,   j) { for (j = from; j <= NF; j++) if (base($j) == "main") return 1
                                        return 0 }
        { for (i = 1; i <= NF; i++) {
              nm = base($i)
              if (nm == "site_strdup" || nm == "site_getline" || nm == "site_fopen") {
                  seen[nm]++
                  if (i == 1) { printf "%s is the leaf, the glibc frame below it is missing: %s\n", nm, $0; bad++ }
                  if (!has_main(i + 1)) { printf "main missing above %s: %s\n", nm, $0; bad++ }
              }
          }
          if (base($1) == "cmp_alloc") {
              seen["cmp_alloc"]++; q = 0
              for (i = 2; i <= NF; i++) if (base($i) == "site_qsort") { q = i; break }
              if (!q) { printf "site_qsort missing above cmp_alloc (unwinding through qsort failed): %s\n", $0; bad++ }
              else if (q == 2) { printf "no glibc qsort frame between cmp_alloc and site_qsort: %s\n", $0; bad++ }
              else if (!has_main(q + 1)) { printf "main missing above site_qsort: %s\n", $0; bad++ }
          } }
        END { n = split("site_strdup site_getline site_fopen cmp_alloc", want, " ")
              for (i = 1; i <= n; i++) if (!(want[i] in seen)) { printf "no stack contains %s\n", want[i]; bad++ }
              exit bad > 0 }' "$T/traces" >&2 ||
        { fail "$unwind unwinder: stacks through glibc (go tool pprof -traces, collapsed, leaf first)"
          grep -E 'site_|cmp_alloc' "$T/traces" | sort | uniq -c | sort -rn | head -20 | sed 's/^/    | /' >&2; }
done

if [ $FAILS -ne 0 ]; then
    echo "debian_libs: $FAILS check(s) failed" >&2
    exit 1
fi
echo "debian_libs: ok"
