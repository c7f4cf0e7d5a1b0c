#!/bin/sh
# leaf_prune: heapsift's views apply a profile's drop_frames and keep_frames exactly as
# `go tool pprof` does (its Profile.Prune after the merge, before every filter;
# src/common/model/dropframes.c), checked byte for byte on random profiles made by the generator
# of heapsift's own model (tests/lib/gen_profiles.c: random stacks, recursion, inlined lines,
# unnamed and unsymbolized frames) given an expression that prunes about half of their
# frames and a keep_frames that spares some of those: top at every sample type and
# granularity, traces, peek, --focus/--hide/--show after the prune, and diff (pprof keeps the
# first profile's expression); and `--no-drop-frames` changes the stacks (the prune is on).
# Usage: leaf_prune.sh BUILD_DIR SOURCE_DIR. Exits 77 (skip) when go is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leaf_prune
SRC=$(cd "$2" && pwd)
hs_need_go
hs_need_built "$CLI"
tmp=$T
export GOCACHE="$tmp/gocache"
c=$SRC/src/common
common="$c/model/profile.c $c/model/pprof.c $c/base/gzip.c $c/base/fileio.c $c/base/fdio.c
    $c/base/pb.c $c/base/buf.c $c/base/utf8.c"
# shellcheck disable=SC2086
"${CC:-cc}" -std=gnu11 -O1 -I"$c" "$SRC/tests/lib/gen_profiles.c" $common -lz -o "$tmp/gen"

# setdrop IN OUT DROP KEEP: IN with its drop_frames and keep_frames set
cat >"$tmp/setdrop.c" <<'EOF'
#include "model/pprof.h"
int main(int argc, char **argv)
{
    hs_buf_t raw = HS_BUF_INIT, in = HS_BUF_INIT;
    hs_profile_t *p = NULL;
    char err[256];
    if (argc != 5 || hs_read_file(argv[1], &raw) ||
        hs_gunzip_auto(raw.data, raw.len, &in, err, sizeof(err)) ||
        hs_pprof_decode(in.data, in.len, &p, err, sizeof(err)))
        return 1;
    p->drop_frames = hs_profile_str(p, argv[3]);
    p->keep_frames = hs_profile_str(p, argv[4]);
    return hs_pprof_write_file(p, argv[2]) ? 1 : 0;
}
EOF
# shellcheck disable=SC2086
"${CC:-cc}" -std=gnu11 -O1 -I"$c" "$tmp/setdrop.c" $common -lz -o "$tmp/setdrop"

DROP='ns::func[0-9]*[13579]|Zeta_[0-4][0-9]*'
KEEP='ns::func[0-9]*9'

checks=0
# check OURS_ARGS... -- PPROF_ARGS...: full outputs, byte for byte, neither side symbolizing
# (the generator's mappings name real libraries at made-up addresses)
check() {
    ours=""
    while [ "$1" != "--" ]; do
        ours="$ours $1"
        shift
    done
    shift
    checks=$((checks + 1))
    st=0
    # shellcheck disable=SC2086
    "$CLI" $ours --symbolize=none --comments >"$tmp/ours" 2>"$tmp/ours.err" || st=$?
    go tool pprof -symbolize=none "$@" >"$tmp/theirs" 2>/dev/null || true
    [ -s "$tmp/theirs" ] || [ $st -eq 0 ] || return 0 # both refuse
    if [ "${ours# diff}" != "$ours" ]; then # heapsift's verdict column, the first after cum%
        sed -E 's/^( *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+) +(change|grew|shrank|noise|same)( |$)/\1\3/' \
            "$tmp/ours" >"$tmp/o2"
        mv "$tmp/o2" "$tmp/ours"
    fi
    # pprof orders peek's edges of equal |weight| and opposite signs as its map falls
    if [ "${ours# peek}" != "$ours" ] && [ "$(sort "$tmp/ours" | cksum)" = "$(sort "$tmp/theirs" | cksum)" ]; then
        return 0
    fi
    if [ ! -s "$tmp/theirs" ] || ! cmp -s "$tmp/ours" "$tmp/theirs"; then
        fail "heapsift$ours  vs  go tool pprof $*"
        cat "$tmp/ours.err" >&2
        diff "$tmp/ours" "$tmp/theirs" | head -20 >&2 || true
    fi
}

changed=0
seed=1
while [ $seed -le 12 ]; do
    "$tmp/gen" "$tmp/raw.pb.gz" $seed
    "$tmp/gen" "$tmp/rawb.pb.gz" $((seed + 200))
    "$tmp/setdrop" "$tmp/raw.pb.gz" "$tmp/g.pb.gz" "$DROP" "$KEEP" || fail "setdrop $seed"
    "$tmp/setdrop" "$tmp/rawb.pb.gz" "$tmp/gb.pb.gz" "$DROP" "" || fail "setdrop $seed b"
    f=$tmp/g.pb.gz
    for st in alloc_objects alloc_space inuse_objects inuse_space; do
        check top --sample-type $st "$f" -- -top -sample_index=$st "$f"
    done
    for g in lines addresses; do
        check top --granularity=$g "$f" -- -top -$g "$f"
        check traces --granularity=$g "$f" -- -traces -$g "$f"
    done
    check traces "$f" -- -traces "$f"
    check peek 'func[1-4]' "$f" -- -peek 'func[1-4]' "$f"
    check top --focus 'func[1-3]' "$f" -- -top -focus 'func[1-3]' "$f"
    check top --hide 'Zeta_[5-9]' "$f" -- -top -hide 'Zeta_[5-9]' "$f"
    check traces --show 'func' "$f" -- -traces -show 'func' "$f"
    check diff "$f" "$tmp/gb.pb.gz" -- -top -diff_base "$f" "$tmp/gb.pb.gz"
    check diff "$tmp/gb.pb.gz" "$f" -- -top -diff_base "$tmp/gb.pb.gz" "$f"
    "$CLI" traces --symbolize=none --no-drop-frames "$f" >"$tmp/whole" 2>/dev/null || true
    "$CLI" traces --symbolize=none "$f" >"$tmp/pruned" 2>/dev/null || true
    cmp -s "$tmp/whole" "$tmp/pruned" || changed=$((changed + 1))
    seed=$((seed + 1))
done
[ $changed -gt 0 ] || fail "--no-drop-frames never changed a stack: the prune does nothing"
if [ $FAILS -ne 0 ]; then
    echo "leaf_prune: $FAILS of $checks comparisons failed" >&2
    exit 1
fi
echo "leaf_prune: $checks comparisons with go tool pprof, all equal; $changed of 12 profiles pruned"
