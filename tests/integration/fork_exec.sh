#!/bin/sh
# fork_exec: tests/programs/forker.c under the profiler.
#  - fork without exec: the child writes its own profile under its own pid (site_child, exact
#    at rate 1), the parent's profile has site_parent and not site_child; with a pattern
#    without %p, the parent writes the pattern's name and the child a name with its pid;
#  - fork + exec: the exec'd child is profiled (two files) unless HEAPSIFT_CHILDREN=0 or
#    `heapsift run --no-children` (one file, the parent's);
#  - heapsift_dump(path) writes the named file, holding site_dump.
#  - 300 children ending with _exit in the middle of their trigger dumps leave no temporary
#    file behind.
# usage: fork_exec.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" fork-exec
PROG=$BUILD/programs/forker
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"

# flat FILE NAME: NAME's flat alloc_space in FILE (plain bytes), empty if absent,
# "unreadable(...)" if pprof cannot read FILE.
flat() {
    if ! go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index=alloc_space \
        "$1" >"$T/top.out" 2>&1; then
        echo "unreadable($(head -n 1 "$T/top.out"))"
        return 0
    fi
    awk -v w="$2" '/^ *flat +flat% +sum% +cum +cum%/ { on = 1; next }
        on && NF >= 6 { name = $0; f = $1
            sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); sub(/B$/, "", f)
            if (name == w || substr(name, 1, length(w) + 1) == w "(") { print f; exit } }' "$T/top.out"
}
# want FILE NAME BYTES: NAME's flat alloc_space in FILE is BYTES ("absent": not there)
want() {
    got=$(flat "$1" "$2")
    if [ "$3" = absent ]; then
        [ -z "$got" ] || [ "$got" = 0 ] || fail "$(basename "$1"): $2 present ($got), want absent"
    else
        [ "$got" = "$3" ] || fail "$(basename "$1"): $2 flat alloc_space = ${got:-absent}, want $3"
    fi
}
# files DIR: the names in DIR, one line
files() {
    (cd "$1" && ls -A | tr '\n' ' ')
}
# pids OUTPUT: sets PARENT and CHILD from forker's "parent=P child=C" line
pids() {
    PARENT=$(sed -n 's/^parent=\([0-9]*\) child=\([0-9]*\)$/\1/p' "$1")
    CHILD=$(sed -n 's/^parent=\([0-9]*\) child=\([0-9]*\)$/\2/p' "$1")
    [ -n "$PARENT" ] && [ -n "$CHILD" ]
}
# run NAME DIR PROGRAM-ARGS...: runs forker preloaded at rate 1 with HEAPSIFT_OUT=DIR/PATTERN
# (PATTERN from $PATTERN); stdout in $T/NAME.out; status checked.
run() {
    name=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    rc=0
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/$PATTERN" LD_PRELOAD="$LIB" "$PROG" "$@" \
        >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name: forker $* exited with status $rc"
        show "$T/$name.err" 10
        return 1
    fi
    pids "$T/$name.out" || { fail "$name: forker printed no pids"; show "$T/$name.out"; return 1; }
}

# 1. fork, pattern with %p
PATTERN='prof.%p.pb.gz'
if run fork "$T/fork" fork; then
    P="$T/fork/prof.$PARENT.pb.gz" C="$T/fork/prof.$CHILD.pb.gz"
    n=$(ls -A "$T/fork" | wc -l)
    [ "$n" -eq 2 ] || fail "fork: want 2 files (parent $PARENT, child $CHILD), got: $(files "$T/fork")"
    if [ -s "$C" ]; then
        want "$C" site_child $((300 * 8192))
    else
        fail "fork: no child profile $(basename "$C") (files: $(files "$T/fork"))"
    fi
    if [ -s "$P" ]; then
        want "$P" site_parent $((1000 * 4096))
        want "$P" site_child absent
    else
        fail "fork: no parent profile $(basename "$P") (files: $(files "$T/fork"))"
    fi
fi

# 2. fork, pattern without %p: the parent writes the name as given, the child inserts its pid
PATTERN='prof.pb.gz'
if run fork_nopid "$T/nopid" fork; then
    P="$T/nopid/prof.pb.gz"
    C=$(cd "$T/nopid" && ls -A | grep -v '^prof\.pb\.gz$' | head -n 1)
    n=$(ls -A "$T/nopid" | wc -l)
    [ "$n" -eq 2 ] || fail "fork without %p: want 2 files, got: $(files "$T/nopid")"
    if [ -s "$P" ]; then
        want "$P" site_parent $((1000 * 4096))
        want "$P" site_child absent
    else
        fail "fork without %p: parent did not write prof.pb.gz (files: $(files "$T/nopid"))"
    fi
    case "$C" in
    *"$CHILD"*) want "$T/nopid/$C" site_child $((300 * 8192)) ;;
    *) fail "fork without %p: no file named with the child's pid $CHILD (files: $(files "$T/nopid"))" ;;
    esac
fi

# 3. fork + exec: both profiled
PATTERN='prof.%p.pb.gz'
if run exec "$T/exec" exec; then
    P="$T/exec/prof.$PARENT.pb.gz" C="$T/exec/prof.$CHILD.pb.gz"
    n=$(ls -A "$T/exec" | wc -l)
    [ "$n" -eq 2 ] || fail "exec: want 2 files (parent $PARENT, exec'd child $CHILD), got: $(files "$T/exec")"
    if [ -s "$C" ]; then
        want "$C" site_exec_child $((200 * 2048))
        want "$C" site_parent absent
    else
        fail "exec: exec'd child not profiled: no $(basename "$C") (files: $(files "$T/exec"))"
    fi
    if [ -s "$P" ]; then
        want "$P" site_parent $((1000 * 4096))
        want "$P" site_exec_child absent
    else
        fail "exec: no parent profile $(basename "$P") (files: $(files "$T/exec"))"
    fi
fi

# 4. fork + exec with HEAPSIFT_CHILDREN=0: only the parent
if HEAPSIFT_CHILDREN=0 run exec_nochildren "$T/nochildren" exec; then
    [ "$(files "$T/nochildren")" = "prof.$PARENT.pb.gz " ] ||
        fail "HEAPSIFT_CHILDREN=0: want only prof.$PARENT.pb.gz, got: $(files "$T/nochildren")"
fi

# 5. the same through heapsift run: --no-children gives one file, the default two
for mode in children no-children; do
    dir="$T/run-$mode"
    mkdir -p "$dir"
    opt=""
    [ $mode = no-children ] && opt=--no-children
    rc=0
    # shellcheck disable=SC2086
    "$CLI" run -o "$dir/prof.%p.pb.gz" --rate 1 $opt -- "$PROG" exec >"$T/run.out" 2>"$T/run.err" ||
        rc=$?
    if [ $rc -ne 0 ]; then
        fail "heapsift run $opt -- forker exec: status $rc"
        show "$T/run.err" 10
        continue
    fi
    pids "$T/run.out" || { fail "heapsift run $opt: forker printed no pids"; continue; }
    if [ $mode = no-children ]; then
        [ "$(files "$dir")" = "prof.$PARENT.pb.gz " ] ||
            fail "heapsift run --no-children: want only prof.$PARENT.pb.gz, got: $(files "$dir")"
    else
        [ -s "$dir/prof.$PARENT.pb.gz" ] && [ -s "$dir/prof.$CHILD.pb.gz" ] ||
            fail "heapsift run: want prof.$PARENT.pb.gz and prof.$CHILD.pb.gz, got: $(files "$dir")"
    fi
done

# 6. heapsift_dump(path)
mkdir -p "$T/dump"
rc=0
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/dump/auto.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" dump \
    "$T/dump/named.pb.gz" >"$T/dump.out" 2>"$T/dump.err" || rc=$?
if [ $rc -ne 0 ]; then
    fail "forker dump: status $rc, output: $(cat "$T/dump.out" "$T/dump.err" | head -3)"
elif [ ! -s "$T/dump/named.pb.gz" ]; then
    fail "heapsift_dump(\"$T/dump/named.pb.gz\") returned 0 but wrote nothing (files: $(files "$T/dump"))"
else
    want "$T/dump/named.pb.gz" site_dump $((100 * 1024))
fi
# without the library the weak reference is NULL and forker says so
rc=0
"$PROG" dump "$T/dump/none.pb.gz" >"$T/dump0.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "forker dump without the library: status $rc, want 2"

# 7. 300 children that _exit within 4 ms of their fork, some in the middle of a trigger dump
# of their own (every millisecond): no half-written file is left behind under any name (the
# library before unnamed temporary files left about 70 "*.tmp.PID" files), and the
# profiles that were written are whole.
mkdir -p "$T/burst"
rc=0
HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=0.001 HEAPSIFT_OUT="$T/burst/p.%p.%n.pb.gz" \
    LD_PRELOAD="$LIB" timeout 120 "$PROG" burst 300 >"$T/burst.out" 2>"$T/burst.err" || rc=$?
[ $rc -eq 0 ] || fail "forker burst 300: status $rc: $(head -n 2 "$T/burst.err")"
left=$(find "$T/burst" -name '*.tmp.*' | wc -l)
[ "$left" -eq 0 ] || fail "forker burst 300: $left temporary files left behind, e.g. $(find "$T/burst" -name '*.tmp.*' | head -n 1)"
nbad=0
for f in $(find "$T/burst" -name 'p.*.pb.gz' | head -n 40); do
    "$CLI" top "$f" >/dev/null 2>&1 || nbad=$((nbad + 1))
done
[ "$nbad" -eq 0 ] || fail "forker burst 300: $nbad of the first 40 profiles unreadable"

if [ $FAILS -ne 0 ]; then
    echo "fork_exec: $FAILS check(s) failed" >&2
    exit 1
fi
echo "fork_exec: ok"
