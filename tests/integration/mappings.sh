#!/bin/sh
# mappings: the Mapping table, read by an independent reader and against the process.
#  1. A profile of tests/programs/stackoracle (which copies its /proc/self/maps before it
#     exits): every mapping `go tool pprof -raw` shows has start < limit, and its file
#     offset is the offset /proc/PID/maps gives at that start, in a line of the same file
#     that also holds the limit; the program and libc are mapped.
#  2. The same program profiled with HEAPSIFT_SYMBOLIZE=none, symbolized by go tool pprof
#     from the binary alone (-symbolize=local): it finds the site names only if the
#     mappings' addresses and offsets are right.
#  3. tests/golden/go_runtime_heap.pb.gz, written by Go's runtime/pprof (tests/lib/gogen,
#     go1.19+ on linux/amd64): our reader's mappings (as `heapsift convert --to legacy`
#     lists them) equal those of `go tool pprof -raw`, and the totals of all four sample
#     types of `heapsift top` equal go tool pprof's.
# usage: mappings.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" mappings
SRC=$(cd "$2" && pwd)
PROG=$BUILD/programs/stackoracle
GOLDEN=$SRC/tests/golden/go_runtime_heap.pb.gz
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG" "$GOLDEN"

# rawmaps RAW: "START LIMIT OFFSET PATH" (hex without 0x) per mapping of pprof -raw
rawmaps() {
    awk '/^Mappings/ { on = 1; next }
        on && $1 ~ /^[0-9]+:$/ { split($2, a, "/"); for (i = 1; i <= 3; i++) sub(/^0x/, "", a[i])
                                 print a[1], a[2], a[3], $3 }' "$1"
}

# 1. Mappings against /proc/PID/maps.
rc=0
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$T/stacks" "$T/maps" \
    2>"$T/err" || rc=$?
[ $rc -eq 0 ] && [ -s "$T/p.pb.gz" ] && [ -s "$T/maps" ] ||
    { show "$T/err"; echo "FAIL: stackoracle: status $rc, no profile or no maps" >&2; exit 1; }
go tool pprof -symbolize=none -raw "$T/p.pb.gz" >"$T/p.raw" 2>&1 || fail "go tool pprof -raw"
rawmaps "$T/p.raw" >"$T/p.maps"
awk -v prog="$PROG" '
    function hex(s,   i, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v }
    FNR == 1 { file++ }
    file == 1 { split($1, r, "-"); n++; ms[n] = hex(r[1]); ml[n] = hex(r[2]); mo[n] = hex($3)
                mp[n] = $6; next }
    { s = hex($1); l = hex($2); o = hex($3); p = $4; k++
      if (p == prog) sawprog = 1
      if (p ~ /\/libc\.so/) sawlibc = 1
      if (s >= l) { printf "mapping %s: start 0x%s >= limit 0x%s\n", p, $1, $2; bad++; next }
      okstart = 0; oklimit = 0
      for (i = 1; i <= n; i++) {
          if (mp[i] != p) continue
          if (s >= ms[i] && s < ml[i] && mo[i] + (s - ms[i]) == o) okstart = 1
          if (l > ms[i] && l <= ml[i]) oklimit = 1
      }
      if (!okstart) { printf "mapping %s 0x%s/0x%s/0x%s: no maps line with that offset at its start\n", p, $1, $2, $3; bad++ }
      if (!oklimit) { printf "mapping %s: limit 0x%s in no maps line of the file\n", p, $2; bad++ } }
    END { if (!sawprog) { print "no mapping of " prog; bad++ }
          if (!sawlibc) { print "no mapping of libc"; bad++ }
          exit bad > 0 }' "$T/maps" "$T/p.maps" >"$T/bad" 2>&1 ||
    { fail "profile mappings against /proc/PID/maps"; show "$T/bad"; show "$T/p.maps"; show "$T/maps" 60; }

# 2. Symbolized by go tool pprof from the binary.
rc=0
HEAPSIFT_SYMBOLIZE=none HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/n.pb.gz" LD_PRELOAD="$LIB" "$PROG" \
    "$T/stacks2" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] && [ -s "$T/n.pb.gz" ] || { show "$T/err"; fail "HEAPSIFT_SYMBOLIZE=none run: status $rc"; }
go tool pprof -symbolize=none -raw "$T/n.pb.gz" >"$T/n.raw" 2>&1 || fail "go tool pprof -raw (none)"
grep -q 'site_leaf' "$T/n.raw" && fail "HEAPSIFT_SYMBOLIZE=none profile already has names"
go tool pprof -symbolize=local -top -nodefraction=0 -nodecount=0 "$T/n.pb.gz" >"$T/n.top" 2>&1 ||
    fail "go tool pprof -symbolize=local: $(head -3 "$T/n.top")"
for fn in site_leaf site_a site_c thread_entry; do
    grep -Eq " $fn\$" "$T/n.top" || { fail "go tool pprof found no $fn in the binary"; show "$T/n.top"; }
done

# 3. A profile written by Go's runtime, read by us and by go tool pprof.
go tool pprof -symbolize=none -raw "$GOLDEN" >"$T/g.raw" 2>&1 || fail "go tool pprof -raw golden"
rawmaps "$T/g.raw" >"$T/g.go"
"$CLI" convert --to legacy --no-symbolize "$GOLDEN" >"$T/g.legacy" 2>"$T/g.err" ||
    { fail "heapsift convert --to legacy of the golden profile"; show "$T/g.err"; }
awk '/^MAPPED_LIBRARIES:/ { on = 1; next }
    on && NF >= 6 { split($1, r, "-"); printf "%s %s %s %s\n", r[1], r[2], $3, $6 }' \
    "$T/g.legacy" >"$T/g.hs"
# pprof -raw prints hex without leading zeros; legacy pads: compare as numbers.
awk 'function hex(s,   i, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return v }
    FNR == 1 { file++ }
    file == 1 { want[hex($1) " " hex($2) " " hex($3) " " $4] = $0; nw++; next }
    { have[hex($1) " " hex($2) " " hex($3) " " $4] = 1 }
    END { for (k in want) if (!(k in have)) { print "go tool pprof has mapping " want[k] ", heapsift not"; bad++ }
          if (nw == 0) { print "no mappings in the golden profile"; bad++ }
          exit bad > 0 }' "$T/g.go" "$T/g.hs" >"$T/g.bad" 2>&1 ||
    { fail "our reader's mappings of the Go profile"; show "$T/g.bad"; show "$T/g.hs"; }
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    want=$(go tool pprof -symbolize=none -top -unit=B -sample_index=$st "$GOLDEN" 2>&1 |
        sed -n 's/.* of \([0-9.]*B\) total.*/\1/p')
    got=$("$CLI" top --sample-type $st --unit B "$GOLDEN" 2>&1 | sed -n 's/.* of \([0-9.]*B\) total.*/\1/p')
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "golden $st total: heapsift '$got', go tool pprof '$want'"
done

[ $FAILS -eq 0 ] || exit 1
echo "mappings: ok (against /proc/PID/maps, symbolized by go tool pprof, Go's own profile)"
