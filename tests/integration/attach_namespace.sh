#!/bin/sh
# attach_namespace: a target in another mount namespace (unshare -m: its /tmp a tmpfs of
# its own unless the build directory is under /tmp, and the library's path there another
# file, /dev/null bound over it). heapsift
# attach copies libheapsift.so into the target's /tmp through /proc/PID/root, says so,
# and the attach works: the profile (-o a directory both namespaces share) holds the
# round's site_keep, go tool pprof reads it; a second attach reuses the copy (the
# libheapsift mappings do not change). A target whose library directory holds glibc only
# (libc, libm, the loader: a container's) gets copies of what the library needs beside it
# (libz, libdw, libelf, ..., the decoder libZydis), said on one line; malloc is hooked in
# place and the profile holds site_keep. When the target's /tmp, /var/tmp and /dev/shm are
# all read-only, the attach is refused with status 2 and one line saying why, and the
# target runs on. Skipped (77) when this machine cannot make a mount namespace (unshare -m
# as root, or unshare -Urm with user namespaces).
# usage: attach_namespace.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_namespace
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"
command -v unshare >/dev/null 2>&1 || { echo "SKIP: no unshare"; exit 77; }
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    NS="unshare -m --propagation private"
elif unshare -Urm true 2>/dev/null; then
    NS="unshare -Urm"
else
    echo "SKIP: cannot make a mount namespace here (unshare -m needs root; unshare -Urm user namespaces)"
    exit 77
fi
# the target's files live in the build directory. The namespace's /tmp is a tmpfs of its
# own, unless the build directory is under /tmp (a CI clone): the tmpfs would hide it,
# so /tmp is then the same directory, and read-only (a bind of itself) where asked.
D=$(mktemp -d "$BUILD/attach_namespace.XXXXXX")
# a target left by a failure (waiting for files under $D) ends with the test
trap 'pkill -9 -f "attach_target $D/d" 2>/dev/null || true; rm -rf "$T" "$D"' EXIT INT TERM
case "$(cd "$BUILD" && pwd -P)/" in
/tmp/*)
    TMP_OWN=true
    TMP_RO="mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp"
    ;;
*)
    TMP_OWN="mount -t tmpfs tmpfs /tmp"
    TMP_RO="mount -t tmpfs -o ro tmpfs /tmp"
    ;;
esac

# ns_start SETUP: attach_target "$D/d" in a new mount namespace after the shell SETUP.
ns_start() {
    rm -rf "$D/d" "$D/out" "$D/status"
    mkdir -p "$D/d"
    ( set +e; $NS sh -c "$1 && exec \"\$0\" \"\$1\"" "$BUILD/programs/attach_target" "$D/d" \
        >"$D/out" 2>"$D/err"; echo $? >"$D/status" ) &
    i=0
    until grep -q '^ready$' "$D/out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 1000 ] || { fail "the target never ready"; show "$D/err"; exit 1; }
        sleep 0.01
    done
    TPID=$(pgrep -f "attach_target $D/d" | head -1)
    [ "$(readlink "/proc/$TPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
        fail "the target is in this mount namespace"
}
# ns_round LABEL PROFILE: round 1, then detach; PROFILE holds the round's site_keep
ns_round() {
    : >"$D/d/go.1"
    i=0
    until grep -q '^round 1 done$' "$D/out"; do
        i=$((i + 1)); [ $i -lt 1000 ] || { fail "$1: round 1 never done"; break; }
        sleep 0.01
    done
    "$CLI" detach "$TPID" >"$T/d.out" 2>"$T/d.err" || { fail "$1: detach: status $?"; show "$T/d.err"; }
    gotop "$2" inuse_space >"$T/top" 2>&1 || { fail "$1: go tool pprof cannot read the profile"; show "$T/top"; }
    grep -q site_keep "$T/top" || { fail "$1: no site_keep in the profile"; show "$T/top"; show "$D/err"; }
}
ns_end() {
    : >"$D/d/end"
    i=0
    while [ ! -s "$D/status" ]; do
        i=$((i + 1)); [ $i -lt 1000 ] || { fail "the target did not exit"; kill -9 "$TPID"; break; }
        sleep 0.01
    done
    [ "$(cat "$D/status")" = 0 ] || { fail "$1: the target's exit status: $(cat "$D/status")"; show "$D/err"; }
}

ns_start "$TMP_OWN && mount --bind /dev/null '$LIB'"
"$CLI" attach --rate 1 -o "$D/p1.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" || { fail "attach: status $?"; show "$T/a.err"; }
grep -q "process $TPID sees another filesystem.*a copy at /tmp/heapsift-attach-[^/]*/libheapsift.so.0 there" "$T/a.err" ||
    { fail "attach: no line about the copy"; show "$T/a.err"; }
ls "/proc/$TPID/root/tmp/"heapsift-attach-*/libheapsift.so.0 >/dev/null 2>&1 || fail "no copy in the target's /tmp"
copy=$(sed -n 's/.*a copy at \(\/tmp\/heapsift-attach-[^/]*\)\/libheapsift.so.0 there.*/\1/p' "$T/a.err")
n1=$(at_libs "$TPID")
ns_round copy "$D/p1.pb.gz"
"$CLI" attach -o "$D/p2.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" || { fail "second attach: status $?"; show "$T/a.err"; }
grep -q 're-attached' "$T/a.err" || { fail "second attach: not a re-attach"; show "$T/a.err"; }
[ "$(at_libs "$TPID")" = "$n1" ] || fail "second attach: $(at_libs "$TPID") libheapsift mappings, $n1 before"
"$CLI" detach "$TPID" >"$T/d.out" 2>"$T/d.err" || { fail "second detach: status $?"; show "$T/d.err"; }
ns_end copy
# the copy stays for the process's life; in a /tmp of this namespace's it is ours to remove
case $copy in /tmp/heapsift-attach-*) [ "$TMP_OWN" != true ] || rm -rf "$copy" ;; esac

# a filesystem with glibc only (a container without libdw, libelf, libz, liblzma, libbz2,
# libgcc_s, libZydis): its library directory a copy of libc, libm and the loader
mkdir -p "$D/lib"
for l in libc.so.6 libm.so.6 ld-linux-x86-64.so.2; do cp -L "/lib/x86_64-linux-gnu/$l" "$D/lib/"; done
GLIBC_ONLY="mount --bind '$D/lib' /usr/lib/x86_64-linux-gnu"
[ /lib/x86_64-linux-gnu -ef /usr/lib/x86_64-linux-gnu ] ||
    GLIBC_ONLY="$GLIBC_ONLY && mount --bind '$D/lib' /lib/x86_64-linux-gnu"
ns_start "$TMP_OWN && $GLIBC_ONLY"
[ ! -e "/proc/$TPID/root/usr/lib/x86_64-linux-gnu/libdw.so.1" ] || fail "glibc only: the target sees libdw"
"$CLI" attach --rate 1 -o "$D/p4.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" || { fail "glibc only: attach: status $?"; show "$T/a.err"; }
grep -q "reach: hooked in place: free, malloc" "$T/a.err" || { fail "glibc only: malloc not hooked in place"; show "$T/a.err"; }
# libdw (dlopened on the first symbolization) and its own dependencies come along too
for l in libz.so.1 libdw.so.1 libelf.so.1 libZydis.so.4.0; do
    grep -q "process $TPID lacks libraries heapsift needs (.*$l.*): copies of this machine's are at /tmp/heapsift-attach-[^/]*/heapsift-deps there" "$T/a.err" ||
        { fail "glibc only: no line about the copies naming $l"; show "$T/a.err"; }
done
deps=$(sed -n 's/.*copies of this machine.s are at \(\/tmp\/heapsift-attach-[^ ]*\)\/heapsift-deps there.*/\1/p' "$T/a.err")
ns_round "glibc only" "$D/p4.pb.gz"
ns_end glibc-only
# the copies stay for the process's life; in a /tmp of this namespace's they are ours to remove
case $deps in /tmp/heapsift-attach-*) [ "$TMP_OWN" != true ] || rm -rf "$deps" ;; esac

# nowhere to copy to
ns_start "$TMP_RO && mount --bind /dev/null '$LIB' && mount -t tmpfs -o ro tmpfs /var/tmp && mount -t tmpfs -o ro tmpfs /dev/shm"
at_expect 2 "cannot make a directory in the target's filesystem .*Read-only file system" \
    read-only -- attach -o "$D/p3.pb.gz" "$TPID"
kill -0 "$TPID" 2>/dev/null || fail "read-only: the target died"
[ "$(at_libs "$TPID")" = 0 ] || fail "read-only: libheapsift is mapped in the target"
ns_end read-only
[ "$FAILS" -eq 0 ] && echo "attach_namespace: ok"
exit $((FAILS > 0))
