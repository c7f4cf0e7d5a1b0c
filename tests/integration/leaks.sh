#!/bin/sh
# leaks: the leak report at exit (HEAPSIFT_LEAKS, HEAPSIFT_SUPPRESSIONS, HEAPSIFT_LEAKS_MAX)
# on tests/programs/leaky.c, whose leaks are known (it prints them: SITE NAME BYTES OBJECTS
# FILE:LINE SUPPRESSED_BY), at HEAPSIFT_RATE=1 where the report is exact:
# - every unsuppressed site is listed, largest first, with exactly its bytes and objects, its
#   leaf frame "in NAME .../FILE:LINE (leaky+0x...)" and main as its caller; the summary line
#   adds them up; go tool pprof and heapsift top read the same inuse figures per site from
#   the exit profile;
# - the suppressions by function name, by source file and by module each hide exactly their
#   site's bytes and objects; a race: line is reported once and ignored; built-in rules
#   account for the rest of the suppressed sites;
# - exit status: unchanged with HEAPSIFT_LEAKS=1, 23 with error (stdout still flushed), 0
#   with error and no leaks; an unreadable suppressions file is one error line, noted in
#   the summary, and leaves the built-in rules only;
# - the cap, the report without a writable profile path, `heapsift run --leaks`, a sampled
#   run's wording, and a C++ program that frees everything (no site reported);
# - HEAPSIFT_SYMBOLIZE=none/names: the report still named, suppressions applied;
# - bash running the program: one summary per process, each naming its program and pid;
# - a full stack table: its site shows the made-up frame by name, with no 0x0 address;
# - GNU cat, which closes stderr in an atexit handler: the report still reaches stderr.
# usage: leaks.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leaks
PROG=$BUILD/programs/leaky
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG" "$BUILD/programs/noleak_cc"

cat >"$T/supp" <<'SUPP'
# a global cache is not a leak
leak:^cache_fill$

  leak:registry.c  
race:not_a_leak_type
leak:libz.so
SUPP

# run NAME [VAR=VALUE...] -- ARGS: runs leaky at rate 1; $T/NAME.out, .err, .rc
run() {
    name=$1
    shift
    set +e
    env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$name.pb.gz" LD_PRELOAD="$LIB" "$@" \
        >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    set -e
}

rc() { cat "$T/$1.rc"; }

# summary NAME: the summary line's "BYTES OBJECTS SITES SUPPRESSED"
summary() {
    sed -n 's/^heapsift: \([0-9]*\) bytes in \([0-9]*\) objects\{0,1\} still allocated at exit from \([0-9]*\) sites\{0,1\} (exact: HEAPSIFT_RATE=1; \([0-9]*\) sites\{0,1\} suppressed.*$/\1 \2 \3 \4/p' "$T/$1.err"
}

run all HEAPSIFT_LEAKS=1 HEAPSIFT_SUPPRESSIONS="$T/supp" "$PROG"
[ "$(rc all)" = 0 ] || { fail "HEAPSIFT_LEAKS=1: status $(rc all), want 0"; show "$T/all.err"; }
grep -q '^SITE zlib_alloc ' "$T/all.out" || fail "leaky could not load libz.so.1 (module check void)"

# Listed sites: exact bytes/objects, leaf frame, main as caller, in the program's order
# (largest first).
grep '^SITE .* -$' "$T/all.out" >"$T/listed"
[ "$(wc -l <"$T/listed")" -eq 3 ] || fail "leaky lists $(wc -l <"$T/listed") leaks, want 3"
awk '/^heapsift: [0-9]+ bytes in [0-9]+ objects? allocated from:$/ { print $2, $5; getline; print; getline; print }' \
    "$T/all.err" >"$T/blocks"
i=0
tb=0
to=0
while read -r _ name bytes objs fileline _; do
    i=$((i + 1))
    tb=$((tb + bytes))
    to=$((to + objs))
    got=$(sed -n "$((3 * i - 2))p" "$T/blocks")
    [ "$got" = "$bytes $objs" ] || fail "site $i: '$got', want '$bytes $objs' ($name)"
    sed -n "$((3 * i - 1))p" "$T/blocks" |
        grep -Eq "^    #0 0x[0-9a-f]+ in $name /[^ ]*/$fileline \(leaky\+0x[0-9a-f]+\)\$" ||
        fail "site $i: leaf frame '$(sed -n "$((3 * i - 1))p" "$T/blocks")', want $name .../$fileline"
    sed -n "$((3 * i))p" "$T/blocks" | grep -Eq '^    #1 0x[0-9a-f]+ in main /[^ ]*/leaky\.c:[0-9]+ \(leaky\+' ||
        fail "site $i: caller frame '$(sed -n "$((3 * i))p" "$T/blocks")', want main .../leaky.c:LINE"
done <"$T/listed"
[ "$(grep -c 'allocated from:$' "$T/all.err")" -eq 3 ] || fail "$(grep -c 'allocated from:$' "$T/all.err") sites listed, want 3"

# Suppressed: each user rule hides exactly its site; the summary counts every suppressed site.
grep '^SITE .* [^-]$' "$T/all.out" | while read -r _ name bytes objs _ pat; do
    line=$(grep -n "leak:.*$pat" "$T/supp" | cut -d: -f1)
    want="heapsift:   $bytes bytes in $objs objects from [0-9]+ sites?: leak:.*$pat.* \($T/supp:$line\)"
    grep -Eq "^$want\$" "$T/all.err" || fail "suppression of $name: no line like '$want'"
done
nsupp=$(sed -n 's/^heapsift:   .* from \([0-9]*\) sites\{0,1\}: leak:.*$/\1/p' "$T/all.err" | awk '{ s += $1 } END { print s + 0 }')
sed -n 's/^heapsift:   .*: leak:\(.*\) (built-in:[0-9]*)$/\1/p' "$T/all.err" >"$T/builtin_used"
grep -vxq -e '_IO_file_doallocate' -e 'dl_open_worker' -e '_dl_init' "$T/builtin_used" &&
    { fail "unexpected built-in suppressions used"; show "$T/builtin_used"; }
[ "$(summary all)" = "$tb $to 3 $nsupp" ] ||
    { fail "summary '$(summary all)', want '$tb $to 3 $nsupp'"; show "$T/all.err" 60; }
[ "$(grep -c "suppression type 'race' ignored" "$T/all.err")" -eq 1 ] ||
    { fail "race: line not reported exactly once"; show "$T/all.err" 3; }

# The independent reader: the exit profile has the same inuse figures per site.
awk '/^SITE/ { print $2, "flat", -1, -1, $4, $3 }' "$T/all.out" >"$T/expect"
for st in inuse_objects inuse_space; do
    col=$([ $st = inuse_objects ] && echo 5 || echo 6)
    gotop "$T/all.pb.gz" $st | table >"$T/go.$st"
    compare "go pprof $st" "$T/expect" "$T/go.$st" $col 0 || fail "go tool pprof $st differs from leaky's truth"
    hstop "$T/all.pb.gz" $st | table >"$T/hs.$st"
    compare "heapsift top $st" "$T/expect" "$T/hs.$st" $col 0 || fail "heapsift top $st differs from leaky's truth"
done

# Exit status 23 with error, stdout flushed; the program's own status otherwise.
run err HEAPSIFT_LEAKS=error HEAPSIFT_SUPPRESSIONS="$T/supp" "$PROG"
[ "$(rc err)" = 23 ] || fail "HEAPSIFT_LEAKS=error with leaks: status $(rc err), want 23"
cmp -s "$T/err.out" "$T/all.out" || fail "HEAPSIFT_LEAKS=error: stdout not flushed before exit 23"
run own HEAPSIFT_LEAKS=1 "$PROG" --exit 7
[ "$(rc own)" = 7 ] || fail "HEAPSIFT_LEAKS=1 --exit 7: status $(rc own)"
run none HEAPSIFT_LEAKS=error "$PROG" none
[ "$(rc none)" = 0 ] || { fail "no leaks, error mode: status $(rc none), want 0"; show "$T/none.err"; }
[ "$(summary none | cut -d' ' -f1-3)" = "0 0 0" ] || { fail "no leaks: summary '$(summary none)'"; show "$T/none.err"; }
! grep -q 'allocated from:' "$T/none.err" || fail "no leaks: a site is listed"
run none5 HEAPSIFT_LEAKS=error "$PROG" none --exit 5
[ "$(rc none5)" = 5 ] || fail "no leaks, --exit 5: status $(rc none5)"
run off "$PROG"
! grep -q 'leak' "$T/off.err" || { fail "HEAPSIFT_LEAKS unset: a report was printed"; show "$T/off.err"; }
run rate0 HEAPSIFT_LEAKS=error HEAPSIFT_RATE=0 "$PROG"
[ "$(rc rate0)" = 0 ] && [ "$(cat "$T/rate0.err")" = "heapsift: HEAPSIFT_LEAKS=error: no leak report, HEAPSIFT_RATE=0 turns sampling off" ] ||
    { fail "HEAPSIFT_RATE=0: status $(rc rate0), want 0 and one line saying there is no report"; show "$T/rate0.err"; }

# Unreadable suppressions file: one error line naming it; built-in rules only; status 23.
run nofile HEAPSIFT_LEAKS=error HEAPSIFT_SUPPRESSIONS="$T/missing.supp" "$PROG"
[ "$(rc nofile)" = 23 ] || fail "missing suppressions file: status $(rc nofile), want 23"
[ "$(grep -c "HEAPSIFT_SUPPRESSIONS=$T/missing.supp: No such file" "$T/nofile.err")" -eq 2 ] ||
    { fail "missing file: want the error line and the summary's note"; show "$T/nofile.err" 5; }
every=$(awk '/^SITE/ { b += $3; o += $4 } END { print b, o }' "$T/all.out")
[ "$(summary nofile | cut -d' ' -f1-2)" = "$every" ] ||
    fail "missing file: summary '$(summary nofile)', want every site's bytes and objects: $every"

# The cap; the report without a writable profile path.
run cap HEAPSIFT_LEAKS=1 HEAPSIFT_LEAKS_MAX=1 HEAPSIFT_SUPPRESSIONS="$T/supp" HEAPSIFT_OUT="$T/no/such/dir/x.pb.gz" "$PROG"
[ "$(grep -c 'allocated from:$' "$T/cap.err")" -eq 1 ] || fail "HEAPSIFT_LEAKS_MAX=1: $(grep -c 'allocated from:$' "$T/cap.err") sites listed"
rest=$(awk '/^SITE .* -$/ && n++ { b += $3; o += $4 } END { print b " bytes in " o " objects" }' "$T/all.out")
grep -q "^heapsift: ... and 2 more sites: $rest (HEAPSIFT_LEAKS_MAX=0 lists every site)\$" "$T/cap.err" ||
    { fail "cap: no '... and 2 more sites: $rest' line"; show "$T/cap.err"; }
grep -q 'cannot write profile' "$T/cap.err" || fail "unwritable path: no write error"
[ "$(summary cap)" = "$(summary all)" ] || fail "unwritable path: summary '$(summary cap)'"

# heapsift run mirrors the variables.
set +e
"$CLI" run -q --rate 1 --leaks error --suppressions "$T/supp" -o "$T/run.pb.gz" -- "$PROG" >/dev/null 2>"$T/run.err"
r=$?
set -e
[ "$r" = 23 ] || fail "heapsift run --leaks error: status $r, want 23"
[ "$(sed -n 's/.*still allocated at exit from \([0-9]*\) sites.*/\1/p' "$T/run.err")" = 3 ] ||
    { fail "heapsift run: summary"; show "$T/run.err"; }

# Sampled: estimates flagged, the miss probability stated; the big site is seen (10 objects
# of the rate's size: missed with probability exp(-10)).
run sampled HEAPSIFT_LEAKS=1 HEAPSIFT_RATE=4096 HEAPSIFT_SEED=7 HEAPSIFT_SUPPRESSIONS="$T/supp" "$PROG"
grep -q '1-exp(-s/4096)' "$T/sampled.err" && grep -q '(estimates at HEAPSIFT_RATE=4096; ' "$T/sampled.err" ||
    { fail "sampled: wording"; show "$T/sampled.err"; }
grep -A1 '^heapsift: ~[0-9]* bytes in ~[0-9]* objects\{0,1\} allocated from:$' "$T/sampled.err" | grep -q ' in leak_big ' ||
    { fail "sampled: leak_big not listed"; show "$T/sampled.err"; }

# A C++ program that frees everything: nothing listed, status 0 even with error.
run cc HEAPSIFT_LEAKS=error "$BUILD/programs/noleak_cc"
[ "$(rc cc)" = 0 ] && [ "$(summary cc | cut -d' ' -f1-3)" = "0 0 0" ] ||
    { fail "noleak_cc: status $(rc cc), summary '$(summary cc)'"; show "$T/cc.err"; }

# HEAPSIFT_SYMBOLIZE=none or names: the profile keeps what was asked (no names, or no
# files), but the report still names functions and files, and the suppressions by function
# and by file (built-in ones included) apply as they do by default.
for mode in none names; do
    run "sym$mode" HEAPSIFT_LEAKS=1 HEAPSIFT_SYMBOLIZE=$mode HEAPSIFT_SUPPRESSIONS="$T/supp" "$PROG"
    [ "$(summary "sym$mode")" = "$(summary all)" ] &&
        [ "$(grep -c '^    #0 0x[0-9a-f]* in leak_[a-z_]* .*leaky\.c:[0-9]* (leaky+0x' "$T/sym$mode.err")" -eq 3 ] ||
        { fail "HEAPSIFT_SYMBOLIZE=$mode: summary '$(summary "sym$mode")', want '$(summary all)', named frames"; show "$T/sym$mode.err"; }
done
go tool pprof -symbolize=none -raw "$T/symnone.pb.gz" 2>/dev/null | grep -q 'leak_' &&
    fail "HEAPSIFT_SYMBOLIZE=none: the profile has function names"

# bash running the program (dash ends with _exit, so it would not report): each process
# reports for itself, the summary line names it, so a CI log tells them apart; with error,
# the leaking child's 23 reaches the shell.
if command -v bash >/dev/null 2>&1; then
    run sh HEAPSIFT_LEAKS=error HEAPSIFT_SUPPRESSIONS="$T/supp" HEAPSIFT_OUT="$T/sh.%p.pb.gz" \
        bash -c "\"$PROG\" >/dev/null; echo \$? >\"$T/sh.child\""
    grep -q "still allocated at exit from 3 sites (.*) in $PROG (pid [0-9]*)\$" "$T/sh.err" &&
        grep -q "still allocated at exit from [0-9]* sites (.*) in bash (pid [0-9]*)\$" "$T/sh.err" &&
        [ "$(cat "$T/sh.child")" = 23 ] ||
        { fail "bash -c PROG: a summary naming each process, child status 23"; show "$T/sh.err"; }
fi

# a full stack table (HEAPSIFT_MAX_STACKS at its minimum, a program with more distinct
# stacks): its site's one frame is the made-up one, named, without a fake address; the
# profile names it the same for go tool pprof.
SEM=$BUILD/programs/stress_semantics
if [ -x "$SEM" ]; then
    st=0
    HEAPSIFT_RATE=1 HEAPSIFT_MAX_STACKS=16 HEAPSIFT_LEAKS=1 HEAPSIFT_OUT="$T/full.pb.gz" \
        LD_PRELOAD="$LIB" "$SEM" 20 >/dev/null 2>"$T/full.err" || st=$?
    full='[heapsift: stack table full: HEAPSIFT_MAX_STACKS reached]'
    [ $st -eq 0 ] && grep -qxF "    #0 $full" "$T/full.err" && ! grep -q '^    #[0-9]* 0x0 ' "$T/full.err" ||
        { fail "stack table full: status $st, want a site '#0 $full' and no 0x0 frame"; show "$T/full.err"; }
    gotop "$T/full.pb.gz" inuse_space >"$T/full.go" 2>&1 && grep -qF "$full" "$T/full.go" ||
        { fail "stack table full: go tool pprof -top does not name '$full'"; show "$T/full.go"; }
else
    fail "$SEM not built"
fi

# A program that closes its stderr before it exits (GNU cat does, in an atexit handler):
# the report still reaches the stderr it started with, and names the program. The library
# before the saved copy printed nothing and exited 23 without a word. What cat leaves is
# all reachable (globals hold it): error fails the run only with HEAPSIFT_LEAKS_REACHABLE=1.
st=0
printf 'x\n' >"$T/cat.in"
HEAPSIFT_RATE=1 HEAPSIFT_LEAKS=error HEAPSIFT_LEAKS_REACHABLE=1 HEAPSIFT_OUT="$T/cat.pb.gz" \
    LD_PRELOAD="$LIB" cat "$T/cat.in" >"$T/cat.out" 2>"$T/cat.err" || st=$?
[ "$st" = 23 ] && grep -q "still allocated at exit from .* in cat (pid" "$T/cat.err" ||
    { fail "cat (stderr closed at exit): status $st, want 23 and the summary line"; show "$T/cat.err" 5; }
cmp -s "$T/cat.in" "$T/cat.out" || fail "cat: its output changed"
st=0
HEAPSIFT_RATE=1 HEAPSIFT_LEAKS=error HEAPSIFT_OUT="$T/cat2.pb.gz" LD_PRELOAD="$LIB" \
    cat "$T/cat.in" >"$T/cat.out" 2>"$T/cat2.err" || st=$?
[ "$st" = 0 ] && grep -q "^heapsift: of which unreachable (no pointer to them found): 0 bytes in 0 objects from 0 sites\$" "$T/cat2.err" ||
    { fail "cat, reachable leaks only: status $st, want 0 and no unreachable site"; show "$T/cat2.err" 50; }

[ "$FAILS" -eq 0 ] && echo "leaks: ok ($tb bytes in $to objects from 3 sites, $nsupp suppressed)"
exit $((FAILS > 0))
