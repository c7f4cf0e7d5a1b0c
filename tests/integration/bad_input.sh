#!/bin/sh
# bad_input: bad configuration and bad files are reported in one line, never crash, and never
# change what the profiled program does.
#  - a bad HEAPSIFT_* value: one stderr line naming the variable and the value; the
#    program's output and exit status unchanged; no profile written;
#  - an unwritable HEAPSIFT_OUT: one stderr line naming the path; output and status unchanged;
#  - an unknown escape (%x) in HEAPSIFT_OUT: one line naming it, the escape kept in the name;
#  - `heapsift top` of a missing, empty, truncated or non-profile file: one
#    "heapsift: error: ..." line, nothing on stdout, status non-zero and below 128;
#  - every verb of `heapsift --help` given an unknown option (long or short), or a value
#    option without its value: one "heapsift: error: VERB: ..." line naming the option,
#    status 1, nothing on stdout; given a missing file: one line naming the file and the
#    error, status non-zero and below 128.
# usage: bad_input.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
LIB=$BUILD/libheapsift.so
CLI=$BUILD/heapsift
PROG=$BUILD/programs/sites
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-bad-input.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
FAILS=0
fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}
show() {
    head -n "${2:-40}" "$1" | sed 's/^/    | /' >&2
}
for f in "$LIB" "$CLI" "$PROG"; do
    [ -e "$f" ] || { echo "FAIL: $f not built" >&2; exit 1; }
done
unset HEAPSIFT_OUT HEAPSIFT_RATE HEAPSIFT_SEED HEAPSIFT_DEPTH HEAPSIFT_UNWIND HEAPSIFT_CHILDREN \
    HEAPSIFT_MAX_STACKS HEAPSIFT_VERBOSE LD_PRELOAD 2>/dev/null || true

# preload LABEL OUT VAR=VALUE...: runs sites (prints "unchanged-output", exits 5) preloaded
# with HEAPSIFT_OUT=OUT and the given variables; checks status and stdout; stderr in $T/err.
preload() {
    label=$1 out=$2
    shift 2
    rc=0
    env "$@" HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" --say unchanged-output --exit 5 \
        >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 5 ] || { fail "$label: program's exit status $rc, want 5"; show "$T/err" 5; }
    [ "$(cat "$T/out")" = unchanged-output ] ||
        { fail "$label: program's stdout changed, got:"; show "$T/out" 5; }
}
# one_line LABEL NEEDLE...: $T/err is exactly one line containing every NEEDLE (fixed strings)
one_line() {
    label=$1
    shift
    n=$(wc -l <"$T/err")
    [ "$n" -eq 1 ] || { fail "$label: want one line on stderr, got $n:"; show "$T/err" 5; return 0; }
    for needle in "$@"; do
        grep -qF -- "$needle" "$T/err" ||
            { fail "$label: stderr does not name '$needle':"; show "$T/err" 3; }
    done
}

# 1. bad values
for kv in HEAPSIFT_RATE=abc HEAPSIFT_RATE=-5 HEAPSIFT_RATE=12abc HEAPSIFT_SEED=xyz \
    HEAPSIFT_DEPTH=abc HEAPSIFT_DEPTH=1000 HEAPSIFT_UNWIND=bogus HEAPSIFT_MAX_STACKS=lots; do
    var=${kv%%=*} val=${kv#*=}
    rm -rf "$T/b"
    mkdir -p "$T/b"
    preload "$kv" "$T/b/x.%p.pb.gz" "$kv"
    one_line "$kv" "$var" "$val"
    [ -z "$(ls -A "$T/b")" ] || fail "$kv: a profile was written: $(ls -A "$T/b" | tr '\n' ' ')"
done

# 2. unwritable output paths
: >"$T/regular"
for out in /nonexistent/dir/x.pb.gz "$T/regular/x.pb.gz"; do
    preload "HEAPSIFT_OUT=$out" "$out" HEAPSIFT_RATE=65536
    one_line "HEAPSIFT_OUT=$out" "$out"
done

# 2b. an unknown escape in the pattern: one line naming it; the file is written with the
# escape kept as written (the previous library dropped the percent sign silently)
mkdir -p "$T/esc"
preload "HEAPSIFT_OUT=%x" "$T/esc/a%xb.%p.pb.gz" HEAPSIFT_RATE=65536
one_line "HEAPSIFT_OUT with %x" "%x is not an escape"
ls "$T/esc" | grep -q '^a%xb\.[0-9]*\.pb\.gz$' || fail "HEAPSIFT_OUT with %x: files $(ls "$T/esc" | tr '\n' ' ')"

# 3. heapsift top of bad files
rc=0
HEAPSIFT_OUT="$T/real.pb.gz" LD_PRELOAD="$LIB" "$PROG" >/dev/null 2>"$T/err" || rc=$?
bad="$T/missing.pb.gz $T/empty.pb.gz /etc/passwd $T/hello.gz"
: >"$T/empty.pb.gz"
printf 'hello world\n' | gzip >"$T/hello.gz"
if [ $rc -eq 0 ] && [ -s "$T/real.pb.gz" ]; then
    size=$(wc -c <"$T/real.pb.gz")
    head -c 20 "$T/real.pb.gz" >"$T/trunc20.pb.gz"
    head -c $((size / 2)) "$T/real.pb.gz" >"$T/trunchalf.pb.gz"
    head -c $((size - 1)) "$T/real.pb.gz" >"$T/trunc1.pb.gz"
    bad="$bad $T/trunc20.pb.gz $T/trunchalf.pb.gz $T/trunc1.pb.gz"
    rc=0
    "$CLI" top "$T/real.pb.gz" >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 0 ] || { fail "heapsift top of a good profile: status $rc"; show "$T/err" 5; }
else
    fail "could not make a real profile for truncation (sites status $rc)"
    show "$T/err" 5
fi
for f in $bad; do
    rc=0
    "$CLI" top "$f" >"$T/out" 2>"$T/err" || rc=$?
    label="heapsift top $(basename "$f")"
    if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        fail "$label: status $rc, want non-zero and < 128"
    fi
    [ ! -s "$T/out" ] || { fail "$label: wrote to stdout:"; show "$T/out" 5; }
    one_line "$label" "heapsift: error:"
    head -n 1 "$T/err" | grep -q '^heapsift: error: ' ||
        { fail "$label: the line does not start with 'heapsift: error: '"; show "$T/err" 3; }
done

verbs=$("$CLI" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$verbs" ] || fail "heapsift --help lists no commands"
MISSING=$T/no/such.pb.gz
for v in $verbs; do
    for opt in --bogus -Z; do
        rc=0
        "$CLI" "$v" "$opt" x >"$T/out" 2>"$T/err" || rc=$?
        [ $rc -eq 1 ] || fail "heapsift $v $opt: status $rc, want 1"
        [ ! -s "$T/out" ] || { fail "heapsift $v $opt: wrote to stdout:"; show "$T/out" 5; }
        one_line "heapsift $v $opt" "heapsift: error: $v: unknown option '$opt' (see heapsift $v --help)"
    done
    case $v in
    run) continue ;; # runs a command, not a file (tests/integration/cli_run.sh)
    attach | detach) continue ;; # take a process id (tests/integration/attach_refuse.sh)
    convert) set -- --to pprof "$MISSING" ;;
    merge) set -- -o "$T/merged.pb.gz" "$MISSING" ;;
    diff) set -- "$MISSING" "$MISSING" ;;
    peek | list) set -- main "$MISSING" ;;
    check) set -- --max-inuse 1M "$MISSING" ;;
    *) set -- "$MISSING" ;;
    esac
    rc=0
    "$CLI" "$v" "$@" >"$T/out" 2>"$T/err" || rc=$?
    if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        fail "heapsift $v $*: status $rc, want non-zero and < 128"
    fi
    [ ! -s "$T/out" ] || { fail "heapsift $v $*: wrote to stdout:"; show "$T/out" 5; }
    one_line "heapsift $v $*" "heapsift: error: " "$MISSING: No such file or directory"
done
for v in run merge convert symbolize; do
    case $v in
    run) opt=--rate ;;
    *) opt=-o ;;
    esac
    rc=0
    "$CLI" "$v" "$opt" >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 1 ] || fail "heapsift $v $opt: status $rc, want 1"
    one_line "heapsift $v $opt" "heapsift: error: $v: missing value for '$opt' (see heapsift $v --help)"
done

if [ $FAILS -ne 0 ]; then
    echo "bad_input: $FAILS check(s) failed" >&2
    exit 1
fi
echo "bad_input: ok"
