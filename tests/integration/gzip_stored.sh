#!/bin/sh
# gzip_stored: a process's profile under 4 KiB encoded is written as a gzip member of
# stored deflate blocks (src/common/base/gzip.c, hs_gzip_stored), no deflate set-up at
# exit; gzip -t and `go tool pprof` read it as any other. A larger profile (tests/programs/
# sites at rate 1) is still compressed, and both read back alike.
# usage: gzip_stored.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" gzip_stored
hs_need_go
PROG=$BUILD/programs/sites
hs_need_built "$PROG" "$LIB"
HEAPSIFT_OUT="$T/small.pb.gz" LD_PRELOAD="$LIB" /bin/true
HEAPSIFT_OUT="$T/big.pb.gz" HEAPSIFT_RATE=1 LD_PRELOAD="$LIB" "$PROG" >/dev/null 2>&1
# byte 10 (after the 10-byte header) holds BFINAL and BTYPE: 01 = final stored block
btype() { od -An -tx1 -j10 -N1 "$1" | tr -d ' '; }
raw=$(gzip -dc "$T/small.pb.gz" | wc -c)
[ "$raw" -lt 4096 ] || fail "/bin/true's profile is $raw bytes encoded, not under 4096"
[ "$(btype "$T/small.pb.gz")" = 01 ] || fail "small profile: first deflate byte $(btype "$T/small.pb.gz"), not 01 (one final stored block)"
[ "$(btype "$T/big.pb.gz")" != 01 ] || fail "big profile stored, not compressed"
for f in small big; do
    gzip -t "$T/$f.pb.gz" 2>"$T/$f.gz.err" || { fail "$f: gzip -t refuses it"; show "$T/$f.gz.err"; }
    go tool pprof -raw "$T/$f.pb.gz" >"$T/$f.raw" 2>"$T/$f.err" || { fail "$f: go tool pprof refuses it"; show "$T/$f.err"; }
    grep -q 'alloc_space/bytes' "$T/$f.raw" || { fail "$f: no alloc_space/bytes in pprof -raw"; show "$T/$f.raw"; }
done
[ "$FAILS" -eq 0 ] && echo "gzip_stored: ok ($raw bytes stored; big profile compressed)"
exit $((FAILS > 0))
