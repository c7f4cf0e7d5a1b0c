#!/bin/sh
# attach_got: `heapsift attach` where an entry point cannot be patched in place, through the
# import slots (GOT) of the objects that call it, exact at --rate 1:
#  1. --hooks got (HEAPSIFT_HOOKS=got) on attach_target over glibc: every member of the
#     malloc family through the slots; a library the target loads with dlopen after the
#     attach (tests/programs/lib/got_lib.c) is seen once its slots are pointed at heapsift;
#     detach gives every slot its old value and a re-attach writes them again (the target's
#     and the library's), exact for its own round; output and exit status are unchanged.
#  2. attach_target linked against an allocator library of its own whose free patch.c
#     refuses (tests/programs/lib/got_alloc.c): malloc and the others are patched in
#     place, free is reached through the slots (libc's own calls to free too).
# usage: attach_got.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_got
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"
P="$2/tests/programs"
cc -O2 -g -shared -fPIC -o "$T/libgotlib.so" "$P/lib/got_lib.c" || { fail "cannot build got_lib"; exit 1; }
cc -O2 -g -shared -fPIC -o "$T/libgotalloc.so" "$P/lib/got_alloc.c" || { fail "cannot build got_alloc"; exit 1; }
cc -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -o "$T/attach_target_got" \
    "$P/attach_target.c" -L"$T" -Wl,--no-as-needed -lgotalloc -Wl,-rpath,"$T" -pthread -ldl ||
    { fail "cannot build attach_target against got_alloc"; exit 1; }

# 1. Every member through the slots, and a library loaded after the attach.
"$BUILD/programs/attach_target" "$T" --expect lib >"$T/expect"
at_start --lib "$T/libgotlib.so"
"$CLI" attach --hooks got --rate 1 -o "$T/p1.pb.gz" "$TPID" 2>"$T/a1.err" || { fail "attach --hooks got: status $?"; show "$T/a1.err"; }
grep -Eq 'reach: hooked through [0-9]+ import slots: free, malloc, calloc, realloc.*defined by libc\.so\.6; HEAPSIFT_HOOKS=got' "$T/a1.err" ||
    { fail "attach --hooks got did not say it hooked through import slots"; show "$T/a1.err"; }
grep -q 'hooked in place' "$T/a1.err" && { fail "--hooks got patched in place"; show "$T/a1.err"; }
at_round 1
"$CLI" detach "$TPID" >/dev/null 2>"$T/d1.err" || { fail "detach: status $?"; show "$T/d1.err"; }
[ -s "$T/p1.pb.gz" ] && at_check_profile "$T/p1.pb.gz" got
"$CLI" top "$T/p1.pb.gz" | sed '/^Type:/q' | grep -Eq 'loaded later: [0-9]+ import slots of libgotlib\.so pointed at heapsift' ||
    { fail "the profile does not say the library loaded later was reached"; "$CLI" top "$T/p1.pb.gz" | sed '/^Type:/q' >&2; }

# Round 2 while detached; the re-attach sees round 3 only.
at_round 2
"$CLI" attach --rate 1 -o "$T/p2.pb.gz" "$TPID" 2>"$T/a2.err" || { fail "re-attach: status $?"; show "$T/a2.err"; }
at_round 3
"$CLI" detach "$TPID" >/dev/null 2>"$T/d2.err" || { fail "second detach: status $?"; show "$T/d2.err"; }
[ -s "$T/p2.pb.gz" ] && at_check_profile "$T/p2.pb.gz" "got re-attached"
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
printf 'ready\nround 1 done\nround 2 done\nround 3 done\nbye\n' | cmp -s - "$T/out" || { fail "the target's output changed"; show "$T/out"; }

# 2. An allocator whose free cannot be patched in place.
"$BUILD/programs/attach_target" "$T" --expect >"$T/expect"
AT_PROG="$T/attach_target_got" at_start
"$CLI" attach --rate 1 -o "$T/p3.pb.gz" "$TPID" 2>"$T/a3.err" || { fail "attach (got_alloc): status $?"; show "$T/a3.err"; }
grep -Eq 'hooked in place: malloc.*hooked through [0-9]+ import slots: free \(defined by libgotalloc\.so; free not in place: .*back into the patched bytes' "$T/a3.err" ||
    { fail "attach (got_alloc) did not say free went through import slots"; show "$T/a3.err"; }
at_round 1
"$CLI" detach "$TPID" >/dev/null 2>"$T/d3.err" || { fail "detach (got_alloc): status $?"; show "$T/d3.err"; }
[ -s "$T/p3.pb.gz" ] && at_check_profile "$T/p3.pb.gz" got_alloc
at_end
[ "$TSTATUS" = 0 ] || fail "got_alloc: the target's exit status changed: $TSTATUS"
printf 'ready\nround 1 done\nbye\n' | cmp -s - "$T/out" || { fail "got_alloc: the target's output changed"; show "$T/out"; }
[ "$FAILS" -eq 0 ] && echo "attach_got: ok"
exit $((FAILS > 0))
