#!/bin/sh
# main_mapping: a profile written by the library has the main executable as mapping 1, so
# `go tool pprof -top` and `heapsift top` name it "File: <program>" even when the first
# sampled stack's leaf is in a library (a C++ program's first allocation through
# libstdc++, a C program's stdio buffer in libc); `heapsift merge` and `convert` keep it.
# usage: main_mapping.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" main_mapping
hs_need_go

# file_of READER OUTPUT: the File: line of a -top header must name the program
file_is() {
    got=$(sed -n 's/^File: //p' "$3" | head -1)
    [ "$got" = "$2" ] || { fail "$1: File: '$got', want '$2'"; show "$3" 8; }
}

for name in sites_cc sites; do
    PROG=$BUILD/programs/$name
    [ -x "$PROG" ] || { fail "$PROG not built"; continue; }
    P=$T/$name.pb.gz
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$P" LD_PRELOAD="$LIB" "$PROG" --expect >"$T/$name.out" \
        2>"$T/$name.err" || { fail "$name exited with status $?"; show "$T/$name.err"; continue; }
    [ -s "$P" ] || { fail "$name: no profile"; show "$T/$name.err"; continue; }
    gotop "$P" inuse_space >"$T/$name.go" 2>&1 || { fail "$name: go tool pprof failed"; show "$T/$name.go"; }
    file_is "$name: go tool pprof -top" "$name" "$T/$name.go"
    hstop "$P" inuse_space >"$T/$name.hs" 2>&1 || { fail "$name: heapsift top failed"; show "$T/$name.hs"; }
    file_is "$name: heapsift top" "$name" "$T/$name.hs"
    "$CLI" merge -o "$T/$name.merged.pb.gz" "$P" "$P" || fail "$name: heapsift merge failed"
    gotop "$T/$name.merged.pb.gz" inuse_space >"$T/$name.mgo" 2>&1 || { fail "$name: go tool pprof of the merge"; show "$T/$name.mgo"; }
    file_is "$name: merged, go tool pprof -top" "$name" "$T/$name.mgo"
    for to in pprof legacy; do
        "$CLI" convert --to $to -o "$T/$name.$to" "$P" || fail "$name: heapsift convert --to $to failed"
        gotop "$T/$name.$to" inuse_space >"$T/$name.$to.go" 2>&1 || { fail "$name: go tool pprof of convert --to $to"; show "$T/$name.$to.go"; }
        file_is "$name: convert --to $to, go tool pprof -top" "$name" "$T/$name.$to.go"
        hstop "$T/$name.$to" inuse_space >"$T/$name.$to.hs" 2>&1 || { fail "$name: heapsift top of convert --to $to"; show "$T/$name.$to.hs"; }
        file_is "$name: convert --to $to, heapsift top" "$name" "$T/$name.$to.hs"
    done
done
[ "$FAILS" -eq 0 ] || exit 1
echo "PASS: mapping 1 is the program (sites_cc, sites) in the profile, top, merge and convert"
