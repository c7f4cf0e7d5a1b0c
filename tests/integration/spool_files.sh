#!/bin/sh
# spool_files: the spool's life and its reader's refusals (docs/postmortem.md).
# - a normal exit removes the spool; HEAPSIFT_KEEP_SPOOL=1 keeps it, and it reads as the
#   exit's live set; `heapsift run --spool` sets it up;
# - a spool whose process still runs reads as a snapshot, said in its comments;
# - every reader verb (top, traces, collapsed, convert) reads a spool directly;
# - an empty, truncated or corrupted spool (header, live record, stack record) gets exit
#   status 2 and a message saying what was wrong;
# - a path that cannot be created: one line on stderr, the program's output and status
#   unchanged, its exit profile written;
# - on a small tmpfs (mounted here when the test runs as root, else skipped): a spool
#   that does not fit is said once and the program runs on; one that fits survives the
#   filesystem filling up around it (no SIGBUS) and recovers.
# usage: spool_files.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" spool_files
PROG=$BUILD/programs/spoolprog
hs_need_built "$PROG" "$LIB" "$CLI"

cumof() {
    "$CLI" top "$1" --sample-type "$2" --unit B 2>/dev/null |
        awk '$NF == "step" { v = $4; sub(/B$/, "", v); s += v } END { print s + 0 }'
}

# A normal exit removes it; kept, it reads as the exit's live set (exactly the record).
HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$T/gone.%p" HEAPSIFT_OUT="$T/o.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" run "$T/rec" 2 100 2>"$T/err" || fail "spoolprog with a spool: status $?"
ls "$T"/gone.* >/dev/null 2>&1 && fail "the spool stayed after a normal exit"
"$CLI" run -q --rate 1 --spool "$T/kept.%p" --keep-spool -o "$T/o.pb.gz" -- \
    "$PROG" run "$T/rec" 2 100 2>"$T/err" || fail "heapsift run --spool --keep-spool: status $?"
set -- "$T"/kept.*
if [ -f "$1" ]; then
    "$CLI" top --comments "$1" >"$T/top" 2>&1 || fail "top of a kept spool: status $?"
    grep -q 'which ended writing its exit profile' "$T/top" || { fail "kept spool: no exit note"; show "$T/top"; }
    "$PROG" check "$T/rec" "$(cumof "$1" inuse_space)" "$(cumof "$1" inuse_objects)" >"$T/check" ||
        { fail "kept spool: totals differ from the record"; show "$T/check"; }
    KEPT=$1
else
    fail "HEAPSIFT_KEEP_SPOOL=1: no spool left"
    KEPT=""
fi

# A running process: a snapshot, said so; recover does not remove it with --remove.
HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$T/live.%p" LD_PRELOAD="$LIB" HEAPSIFT_OUT="$T/o2.pb.gz" \
    "$PROG" run "$T/rec2" 4 0 2>"$T/err2" &
pid=$!
i=0
while [ ! -f "$T/rec2" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$T/rec2" ] || fail "spoolprog did not start in 30 s"
"$CLI" recover --remove "$T/live.$pid" -o "$T/live.pb.gz" 2>"$T/live.err" || fail "recover of a live spool: status $?"
grep -q "which is still running: a snapshot" "$T/live.err" || { fail "live spool: no snapshot note"; show "$T/live.err"; }
[ -f "$T/live.$pid" ] || fail "recover --remove removed the spool of a running process"
kill -9 $pid
wait $pid 2>/dev/null || true
"$CLI" recover --remove "$T/live.$pid" -o "$T/dead.pb.gz" 2>"$T/dead.err" || fail "recover after the kill: status $?"
grep -q "recovered from process $pid, which ended without exiting, at about" "$T/dead.err" ||
    { fail "killed: no recovered note"; show "$T/dead.err"; }
[ -f "$T/live.$pid" ] && fail "recover --remove kept the spool of a dead process"

# Every reader verb takes a spool.
if [ -n "$KEPT" ]; then
    for v in top traces collapsed; do
        "$CLI" $v "$KEPT" >"$T/v.out" 2>&1 || { fail "$v of a spool: status $?"; show "$T/v.out"; }
        grep -q spool_site "$T/v.out" || { fail "$v of a spool: no spool_site"; show "$T/v.out"; }
    done
    "$CLI" convert --to pprof -o "$T/conv.pb.gz" "$KEPT" >/dev/null 2>&1 || fail "convert of a spool: status $?"
fi

# Refusals: exit 2 and what was wrong.
refuse() { # refuse FILE PATTERN WHAT
    st=0
    "$CLI" recover "$1" -o "$T/x.pb.gz" 2>"$T/ref.err" || st=$?
    [ "$st" = 2 ] || fail "$3: status $st, want 2"
    grep -q "$2" "$T/ref.err" || { fail "$3: message"; show "$T/ref.err"; }
    st=0
    "$CLI" top "$1" >/dev/null 2>&1 || st=$?
    [ "$st" = 2 ] || fail "$3: top's status $st, want 2"
}
: >"$T/empty"
refuse "$T/empty" "empty file" "an empty spool"
if [ -n "$KEPT" ]; then
    head -c 1000 "$KEPT" >"$T/short"
    refuse "$T/short" "truncated: 1000 bytes, shorter than the spool's header" "a spool cut in its header"
    head -c 1000000 "$KEPT" >"$T/cut"
    refuse "$T/cut" "truncated: 1000000 bytes of the" "a spool cut short"
    cp "$KEPT" "$T/hdr"
    printf 'XY' | dd of="$T/hdr" bs=1 seek=40 conv=notrunc 2>/dev/null
    refuse "$T/hdr" "corrupted: the header's checksum" "a damaged header"
    # The first live slot gets a bad commit word (in use or not, it no longer matches): its
    # first byte inverted (a fixed 0xff left it unchanged when it was 0xff already, about
    # one run in 256: a sanitizer run of 2026-11-27 read it as intact).
    off=$(od -An -t u8 -j 80 -N 8 "$KEPT" | tr -d ' ')
    cp "$KEPT" "$T/live"
    b=$(od -An -t u1 -j "$off" -N 1 "$KEPT" | tr -d ' ')
    printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$T/live" bs=1 seek=$off conv=notrunc 2>/dev/null
    [ "$(od -An -t u1 -j "$off" -N 1 "$T/live" | tr -d ' ')" = $((b ^ 255)) ] ||
        fail "the test could not damage the live record at $off"
    refuse "$T/live" "corrupted: live record 0 at offset $off" "a damaged live record"
    soff=$(od -An -t u8 -j 64 -N 8 "$KEPT" | tr -d ' ')
    cp "$KEPT" "$T/stk"
    printf '\377' | dd of="$T/stk" bs=1 seek=$((soff + 20)) conv=notrunc 2>/dev/null
    refuse "$T/stk" "corrupted: stack record at offset $soff" "a damaged stack record"
fi
printf 'hello\n' >"$T/text"
st=0
"$CLI" recover "$T/text" -o "$T/x.pb.gz" 2>"$T/ref.err" || st=$?
[ "$st" = 2 ] && grep -q "not a spool" "$T/ref.err" || { fail "recover of a text file: status $st"; show "$T/ref.err"; }

# A path that cannot be created.
out=$(HEAPSIFT_SPOOL=/nonexistent/dir/s HEAPSIFT_OUT="$T/np.pb.gz" LD_PRELOAD="$LIB" \
    sh -c 'echo hello; exit 7' 2>"$T/np.err") && st=0 || st=$?
[ "$out" = hello ] && [ "$st" = 7 ] || fail "unwritable spool: output '$out' status $st"
[ "$(grep -c 'spool /nonexistent/dir/s: cannot create it' "$T/np.err")" = 1 ] ||
    { fail "unwritable spool: want one line saying so"; show "$T/np.err"; }

# A small tmpfs.
if [ "$(id -u)" != 0 ] || ! mkdir "$T/mnt" || ! mount -t tmpfs -o size=6m tmpfs "$T/mnt" 2>/dev/null; then
    echo "spool_files: SKIP the full-filesystem cases: cannot mount a tmpfs here (not root)"
else
    trap 'umount "$T/mnt" 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
    HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$T/mnt/big" HEAPSIFT_SPOOL_SIZE=16M HEAPSIFT_OUT="$T/big.pb.gz" \
        LD_PRELOAD="$LIB" "$PROG" run "$T/rec3" 1 100 2>"$T/big.err" || fail "spool larger than the tmpfs: status $?"
    [ "$(grep -c 'spool .*cannot reserve its space' "$T/big.err")" = 1 ] ||
        { fail "spool larger than the tmpfs: want one line"; show "$T/big.err"; }
    [ -f "$T/big.pb.gz" ] || fail "spool larger than the tmpfs: no exit profile"
    [ -e "$T/mnt/big" ] && fail "spool larger than the tmpfs: the partial file stayed"
    HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$T/mnt/s.%p" HEAPSIFT_SPOOL_SIZE=4M LD_PRELOAD="$LIB" \
        "$PROG" run "$T/rec4" 4 0 2>"$T/fit.err" &
    pid=$!
    i=0
    while [ ! -f "$T/rec4" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ -f "$T/rec4" ] || fail "spoolprog did not start in 30 s on the tmpfs"
    dd if=/dev/zero of="$T/mnt/fill" bs=64k 2>/dev/null || true # fills it up: ENOSPC
    # It must run on: 0.3 s of its own CPU time after the fill (as long as a load takes to
    # give it), 30 s at most; alive all along.
    cpu() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }
    c0=$(cpu $pid) i=0
    while [ -n "$c0" ] && c=$(cpu $pid) && [ -n "$c" ] && [ $((c - c0)) -lt 30 ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -0 $pid 2>/dev/null || fail "the program died when the tmpfs filled up"
    [ $i -lt 300 ] || fail "the program did not run 0.3 s of CPU in 30 s after the tmpfs filled up"
    kill -9 $pid
    wait $pid 2>/dev/null || st=$?
    "$CLI" recover -q "$T/mnt/s.$pid" -o "$T/fit.pb.gz" || fail "recover from the full tmpfs: status $?"
    "$PROG" check "$T/rec4" "$(cumof "$T/fit.pb.gz" inuse_space)" "$(cumof "$T/fit.pb.gz" inuse_objects)" \
        >"$T/check" || { fail "full tmpfs: totals"; show "$T/check"; }
    umount "$T/mnt" || fail "umount of the tmpfs"
    trap 'rm -rf "$T"' EXIT INT TERM
fi
[ "$FAILS" -eq 0 ] && echo "spool_files: ok"
exit $((FAILS > 0))
