#!/bin/sh
# stack_oracle: whole stacks against an independent oracle. tests/programs/stackoracle
# records glibc's backtrace() from the very call instruction that then calls malloc, at
# three sites (two on the main thread, one on a pthread); at HEAPSIFT_RATE=1 each site's
# sample in the profile (read by `go tool pprof -raw`) must hold that stack frame for frame,
# root frames included (_start on the main thread, clone3 on the pthread): same length, and
# each address equal to the recorded return address or one less (pprof's convention).
# dwarf and libgcc are checked on both builds of the program (stackoracle, without frame
# pointers, and stackoracle_fp); fp only on stackoracle_fp and only from the leaf out to
# main or thread_entry, the last frames built with frame pointers (glibc's frames above them
# are not, so fp may stop there or wander).
# usage: stack_oracle.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" stack-oracle
hs_need_go
hs_need_built "$LIB" "$BUILD/programs/stackoracle" "$BUILD/programs/stackoracle_fp"

# check_stacks ORACLE RAW MODE: MODE whole or root; prints a line per mismatch, exits 1.
check_stacks() {
    awk -v mode="$3" '
        function hex(s,   i, c, v) {
            v = 0; s = tolower(s); sub(/^0x/, "", s)
            for (i = 1; i <= length(s); i++) {
                c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
            return v
        }
        FNR == 1 { file++ }
        file == 1 { want[$1] = $0; next }
        /^Samples:/ { sec = "s"; next }
        /^Locations/ { sec = "l"; next }
        /^Mappings/ { sec = "m"; next }
        sec == "s" && /:/ && $1 == 1 {
            st = $0; sub(/^[^:]*: */, "", st); sz = $2
            if (sz in want) { got[sz] = st; seen[sz]++ } ; next }
        sec == "l" && $1 ~ /^[0-9]+:$/ { id = $1; sub(/:$/, "", id); addr[id] = hex($2) }
        END {
            for (sz in want) {
                n = split(want[sz], w, " "); root = w[2]; nw = n - 2
                if (seen[sz] != 1) { printf "site %s: %d samples of 1 object, want 1\n", sz, seen[sz]; bad++; continue }
                ng = split(got[sz], g, " ")
                upto = (mode == "whole") ? nw : root + 1
                if (mode == "root" && root < 0) { printf "site %s: no frame in main\n", sz; bad++; continue }
                if (mode == "whole" && ng != nw) {
                    printf "site %s: %d frames in the profile, %d in backtrace()\n", sz, ng, nw; bad++ }
                for (i = 1; i <= upto; i++) {
                    a = hex(w[i + 2]); b = (i <= ng) ? addr[g[i]] : -10
                    if (b != a && b != a - 1) {
                        printf "site %s: frame %d is %s in backtrace(), location %s (0x%x) in the profile\n",
                               sz, i - 1, w[i + 2], g[i], b; bad++; break }
                }
            }
            if (length(want) != 3) { print "the oracle wrote " length(want) " sites, want 3"; bad++ }
            exit bad > 0
        }' "$1" "$2"
}

for run in dwarf:stackoracle:whole libgcc:stackoracle:whole dwarf:stackoracle_fp:whole \
    libgcc:stackoracle_fp:whole fp:stackoracle_fp:root; do
    unwind=${run%%:*} rest=${run#*:}
    prog=${rest%%:*} mode=${rest#*:}
    tag=$unwind.$prog
    rc=0
    HEAPSIFT_UNWIND=$unwind HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$tag.pb.gz" LD_PRELOAD="$LIB" \
        "$BUILD/programs/$prog" "$T/$tag.oracle" 2>"$T/$tag.err" || rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$T/$tag.pb.gz" ] || [ ! -s "$T/$tag.oracle" ]; then
        fail "$tag: status $rc, no profile or no oracle"; show "$T/$tag.err"; continue
    fi
    go tool pprof -symbolize=none -raw "$T/$tag.pb.gz" >"$T/$tag.raw" 2>&1 ||
        { fail "$tag: go tool pprof -raw: $(head -3 "$T/$tag.raw")"; continue; }
    check_stacks "$T/$tag.oracle" "$T/$tag.raw" "$mode" >"$T/$tag.diff" 2>&1 ||
        { fail "HEAPSIFT_UNWIND=$unwind, $prog ($mode stacks) differ from backtrace()"
          show "$T/$tag.diff"; show "$T/$tag.oracle"; show "$T/$tag.raw" 60; }
done

[ $FAILS -eq 0 ] || exit 1
echo "stack_oracle: ok (dwarf and libgcc whole stacks on both builds, fp up to main)"
