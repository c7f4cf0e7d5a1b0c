# Shared by the integration tests: set-up, failure reporting, and readers of
# `go tool pprof` / `heapsift top` output. Sourced, not run: tests/lib/ is not globbed
# into ctest.

# hs_setup BUILD_DIR NAME: BUILD, LIB, CLI, a temp dir T removed at exit, FAILS=0.
hs_setup() {
    BUILD=$(cd "$1" && pwd)
    LIB=$BUILD/libheapsift.so
    CLI=$BUILD/heapsift
    T=$(mktemp -d "${TMPDIR:-/tmp}/hs-$2.XXXXXX")
    trap 'rm -rf "$T"' EXIT INT TERM
    export HOME="${HOME:-$T}"
    FAILS=0
}

# hs_need_go: skips (exit 77) when go is missing (go tool pprof is the tests' reader).
hs_need_go() {
    command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }
}

# hs_need_built FILE...: fails the test at once (exit 1) when one of them was not built.
hs_need_built() {
    for _f in "$@"; do
        [ -e "$_f" ] || { echo "FAIL: $_f not built" >&2; exit 1; }
    done
}

fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}

# hs_until SECONDS WHAT CONDITION: evaluates the shell CONDITION every 10 ms until it is
# true; returns 1 (after fail "WHAT: not within SECONDS s") when SECONDS of wall-clock time
# pass first. A test waits for the state it needs with this instead of sleeping and
# hoping; SECONDS is generous (30 on a loaded machine costs nothing when all is well).
hs_until() {
    _u_end=$(($(date +%s) + $1 + 1)) _u_s=$1 _u_what=$2
    shift 2
    until eval "$*"; do
        [ "$(date +%s)" -lt "$_u_end" ] || { fail "$_u_what: not within $_u_s s"; return 1; }
        sleep 0.01
    done
}

# show FILE: the first lines of an output, indented, on stderr
show() {
    head -n "${2:-40}" "$1" | sed 's/^/    | /' >&2
}

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

# traces FILE [keep]: `go tool pprof -traces` -> one line per sample, frames leaf first,
# ";"-joined; inlined frames lose their " (inline)" mark unless "keep" is given.
traces() {
    go tool pprof -symbolize=none -traces -sample_index=alloc_space "$1" | fold_traces "${2:-}"
}

# fold_traces [keep]: -traces text (pprof's, or heapsift traces') on stdin, folded as traces
# prints it.
fold_traces() {
    awk -v keep="${1:-}" '
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

# hs_make_test_profiles DIR SRC: DIR/go.pb.gz and DIR/go2.pb.gz, heap profiles written by
# Go's runtime/pprof (tests/lib/gogen; the second run has 1500 more leafA objects, and its
# own random samples), and DIR/gen, the random profile generator (tests/lib/gen_profiles.c).
hs_make_test_profiles() {
    export GOCACHE="$1/gocache" GOFLAGS=-mod=mod GOPATH="$1/gopath" GO111MODULE=on
    cp -r "$2/tests/lib/gogen" "$1/gogen"
    (cd "$1/gogen" && go build -o gogen . && ./gogen "$1/go.pb.gz" && ./gogen "$1/go2.pb.gz" 1500)
    "${CC:-cc}" -std=gnu11 -O1 -I"$2/src/common" "$2/tests/lib/gen_profiles.c" \
        "$2/src/common/model/profile.c" "$2/src/common/model/pprof.c" "$2/src/common/base/gzip.c" \
        "$2/src/common/base/fileio.c" "$2/src/common/base/fdio.c" "$2/src/common/base/pb.c" \
        "$2/src/common/base/buf.c" "$2/src/common/base/utf8.c" -lz -o "$1/gen"
}

# No heapsift frame: no location in libheapsift.so's mapping, and no (non-inlined) frame named
# like an allocation entry point, operator new/delete or a heapsift function, in the stacks
# as recorded (heapsift traces --no-drop-frames: pprof's -traces would prune such frames by
# the profile's drop_frames). (glibc's own inline wrappers, e.g. ld.so's "calloc (inline)"
# in rtld-malloc.h, are not heapsift's.)
# no_profiler_frames FILE: fails (via fail) if FILE has such a frame.
no_profiler_frames() {
    if go tool pprof -symbolize=none -raw "$1" >/dev/null 2>&1; then
        heapsift_frames "$1" >"$T/hsframes"
        [ ! -s "$T/hsframes" ] || { fail "locations in libheapsift.so's mapping (-raw)"; show "$T/hsframes" 10; }
        "$CLI" traces --no-drop-frames --symbolize=none --sample-type alloc_space "$1" |
            fold_traces keep | awk -F ';' '
            { for (i = 1; i <= NF; i++) if ($i ~ /^(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|__libc_malloc|hs_.*|heapsift_.*|operator new.*|operator delete.*|_Zn[wa].*|_Zd[la].*)$/) {
                  printf "frame \"%s\" in: %s\n", $i, $0; bad++; break } }
            END { exit bad > 0 }' >"$T/badframes" ||
            { fail "allocator/operator new/heapsift frames in stacks"; show "$T/badframes" 10; }
    else
        fail "go tool pprof -raw cannot read the profile"
    fi
}

# cli_refuses VERB WANT NEEDLE ARGS...: `heapsift VERB ARGS` exits WANT with nothing on stdout
# and exactly one line on stderr containing NEEDLE (fixed string); fails (via fail) if not.
cli_refuses() {
    verb=$1 want=$2 needle=$3
    shift 3
    st=0
    "$CLI" "$verb" "$@" >"$T/refuse.out" 2>"$T/refuse.err" || st=$?
    [ $st -eq "$want" ] && [ ! -s "$T/refuse.out" ] && [ "$(wc -l <"$T/refuse.err")" -eq 1 ] &&
        grep -qF -- "$needle" "$T/refuse.err" ||
        { fail "$verb $*: status $st (want $want), stderr:"; show "$T/refuse.err"; }
}
