#!/bin/sh
# attach_spin: attach (--seconds 2) while 16 threads allocate and free as fast as they can:
# the target survives, the profile is written and read by go tool pprof, and the program's
# output and exit status are unchanged. Twice, so the second attach meets the library loaded.
# usage: attach_spin.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_spin
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

at_start --spin
for k in 1 2; do
    "$CLI" attach --seconds 2 --rate 65536 -o "$T/p$k.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" ||
        { fail "attach $k: status $?"; show "$T/a.err"; }
    kill -0 "$TPID" 2>/dev/null || { fail "the target died after attach $k"; show "$T/err"; break; }
    go tool pprof -symbolize=none -top -sample_index=alloc_space "$T/p$k.pb.gz" >"$T/top" 2>&1 || { fail "profile $k: go tool pprof"; show "$T/top"; }
    grep -q spinner "$T/top" || { fail "profile $k: no spinner in it"; show "$T/top"; }
done
at_end
[ "$TSTATUS" = 0 ] || { fail "the target's exit status changed: $TSTATUS"; show "$T/err"; }
printf 'ready\nspun\n' | cmp -s - "$T/out" || { fail "the target's output changed"; show "$T/out"; }
[ "$FAILS" -eq 0 ] && echo "attach_spin: ok"
exit $((FAILS > 0))
