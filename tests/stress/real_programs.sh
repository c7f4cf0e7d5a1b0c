#!/bin/sh
# real_programs: Debian's own programs under the profiler (HEAPSIFT_RATE=64K, perl also at
# rate 1), each run twice, without and with heapsift, in fresh working directories:
#  - python3 (/usr/bin/python3, PYTHONMALLOC=malloc) building a big dict;
#  - perl building a big hash;
#  - sqlite3 running a generated 60,000-row transaction, an index and queries;
#  - git: init, add 400 files, commit, a second commit, log --stat, gc, fsck;
#  - gcc compiling and linking a C file (the driver, cc1, as, collect2 and ld profiled).
# Each must print the same output and exit with the same status with and without heapsift
# (git's commits are made reproducible with fixed names and dates; gcc's object file must
# be byte-identical, the build paths mapped out of its debug information), write valid
# profiles only, and its top sites must make sense: the function that owns the most bytes
# (flat alloc_space) is the program's own allocator wrapper, and a function of its main
# loop holds most of the bytes cumulatively.
# A program that is not installed is left out (scripts/setup.sh installs them all); with
# none of them the script skips.
# usage: real_programs.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" real-programs
RAN=0

# runp TAG CMD...: CMD as is when MODE=base; preloaded with heapsift when MODE=hs, writing
# $PROF/TAG.PID.pb.gz. Stdin and stdout are the caller's.
runp() {
    tag=$1
    shift
    if [ "$MODE" = hs ]; then
        timeout -k 5 120 env LD_PRELOAD="$LIB" HEAPSIFT_RATE="${RATE:-65536}" \
            HEAPSIFT_OUT="$PROF/$tag.%p.pb.gz" "$@"
    else
        timeout -k 5 120 "$@"
    fi
}

# both NAME FUNC: runs FUNC WORKDIR in $T/NAME.base and $T/NAME.hs (MODE base, then hs; the
# profiles in $T/NAME.hs/prof), its stdout in WORKDIR.out; compares status and output, and
# checks that every profile written is valid. Returns 1 if the heapsift run failed.
both() {
    name=$1 func=$2
    for MODE in base hs; do
        w=$T/$name.$MODE
        PROF=$w/prof
        mkdir -p "$w/work" "$PROF"
        rc=0
        (cd "$w/work" && $func) >"$w.out" 2>"$w.err" || rc=$?
        eval "rc_$MODE=$rc"
    done
    # shellcheck disable=SC2154
    if [ "$rc_hs" -ne "$rc_base" ]; then
        fail "$name: exit status $rc_hs under heapsift, $rc_base without"
        show "$T/$name.hs.err" 15
        return 1
    fi
    [ "$rc_base" -eq 0 ] || { fail "$name: failed even without heapsift ($rc_base)"; show "$T/$name.base.err"; }
    if ! diff "$T/$name.base.out" "$T/$name.hs.out" >"$T/$name.diff"; then
        fail "$name: output differs with heapsift (< without, > with)"
        show "$T/$name.diff" 20
    fi
    np=0
    for f in "$T/$name.hs/prof"/*; do
        [ -e "$f" ] || continue
        np=$((np + 1))
        valid "$f" "$name: $(basename "$f")"
    done
    [ $np -gt 0 ] || { fail "$name: no profile written"; show "$T/$name.hs.err"; return 1; }
    RAN=$((RAN + 1))
    echo "$name: same output, $np valid profile(s)"
    return 0
}

# profile_of NAME PATH-SUFFIX: the profile of NAME's heapsift run whose mappings include a
# file ending in PATH-SUFFIX (the process that ran that binary)
profile_of() {
    for f in "$T/$1.hs/prof"/*; do
        if [ "$HAVE_GO" = 1 ]; then
            go tool pprof -symbolize=none -raw "$f" 2>/dev/null | sed -n '/^Mappings/,$p' |
                grep -q "$2 " && { echo "$f"; return 0; }
        else
            "$CLI" top "$f" 2>/dev/null | grep -q "^File: $(basename "$2")\$" &&
                { echo "$f"; return 0; }
        fi
    done
}

# sense LABEL FILE LEAF_RE CUM_RE CUM_PCT: in FILE's alloc_space, the function with the most
# flat bytes matches LEAF_RE, and one matching CUM_RE holds at least CUM_PCT% cumulatively.
sense() {
    if [ ! -s "$2" ]; then
        fail "$1: no profile to judge"
        return 0
    fi
    if [ "$HAVE_GO" = 1 ]; then
        gotop "$2" alloc_space >"$T/sense.top" 2>&1
    else
        "$CLI" top "$2" --sample-type alloc_space --unit B -n 100000 >"$T/sense.top" 2>&1
    fi
    table <"$T/sense.top" | awk -F '\t' -v leaf="$3" -v cum="$4" -v pct="$5" '
        { tot += $2; if ($2 + 0 > best) { best = $2 + 0; top = $1 }
          if ($1 ~ cum && $3 + 0 > c) { c = $3 + 0; cname = $1 } }
        END { bad = 0
              if (top !~ leaf) { printf "top flat site is \"%s\", want /%s/\n", top, leaf; bad = 1 }
              if (tot <= 0 || c < tot * pct / 100) {
                  printf "no /%s/ with >= %d%% cumulative (best: \"%s\" %.1f%%)\n", cum, pct,
                         cname, (tot > 0 ? 100 * c / tot : 0); bad = 1 }
              exit bad }' >"$T/sense.why" ||
        { fail "$1: top sites make no sense: $(tr '\n' ' ' <"$T/sense.why")"; show "$T/sense.top" 25; }
}

# --- python3 ----------------------------------------------------------------------------
py() {
    cat >big.py <<'PY'
d = {}
for i in range(150000):
    d["key%d" % i] = [i, str(i) * 3, (i, i + 1)]
print(len(d), sum(len(v[1]) for v in d.values()))
print(sorted(d)[:3], d["key77777"])
PY
    PYTHONMALLOC=malloc runp python /usr/bin/python3 big.py
}
if [ -x /usr/bin/python3 ]; then
    both python3 py &&
        sense python3 "$(profile_of python3 '/python3[.0-9]*')" 'Py|python' \
            '^_PyEval_EvalFrameDefault$' 50
else
    echo "note: /usr/bin/python3 not installed, left out" >&2
fi

# --- perl -------------------------------------------------------------------------------
pl() {
    runp perl perl -e 'my %h; for my $i (1 .. 150000) { $h{"k$i"} = [$i, "x" x ($i % 100)] }
        my $s = 0; $s += length($_->[1]) for values %h;
        print scalar(keys %h), " $s ", join(",", (sort keys %h)[0 .. 4]), "\n";'
}
if command -v perl >/dev/null 2>&1; then
    both perl pl && sense perl "$(profile_of perl /usr/bin/perl)" '^Perl_safesys(m|re|c)alloc$' \
        '^Perl_runops_standard$' 50
    RATE=1
    both perl-rate1 pl && sense "perl at rate 1" "$(profile_of perl-rate1 /usr/bin/perl)" \
        '^Perl_safesys(m|re|c)alloc$' '^Perl_runops_standard$' 50
    RATE=65536
else
    echo "note: perl not installed, left out" >&2
fi

# --- sqlite3 ----------------------------------------------------------------------------
awk 'BEGIN {
    q = sprintf("%c", 39)
    print "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);"
    print "BEGIN;"
    for (i = 1; i <= 60000; i++)
        printf "INSERT INTO t(name, grp, payload) VALUES (%sname-%d%s, %d, zeroblob(%d));\n",
            q, i, q, i % 97, i % 300
    print "COMMIT;"
    print "CREATE INDEX t_name ON t(name);"
    print "SELECT count(*), sum(length(payload)) FROM t;"
    print "SELECT grp, count(*), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 5;"
    print "SELECT name FROM t WHERE name LIKE " q "name-5999%" q " ORDER BY name;"
    print "UPDATE t SET payload = zeroblob(10) WHERE grp = 3;"
    print "SELECT sum(length(payload)) FROM t;"
}' >"$T/tx.sql"
sq() {
    runp sqlite3 sqlite3 db.sqlite <"$T/tx.sql"
}
if command -v sqlite3 >/dev/null 2>&1; then
    both sqlite3 sq && sense sqlite3 "$(profile_of sqlite3 /usr/bin/sqlite3)" 'sqlite3' \
        '^sqlite3(Malloc|MemMalloc|_malloc|_malloc64)$' 50
else
    echo "note: sqlite3 not installed, left out" >&2
fi

# --- git --------------------------------------------------------------------------------
gt() {
    export GIT_AUTHOR_NAME=heapsift GIT_AUTHOR_EMAIL=hs@example.invalid
    export GIT_COMMITTER_NAME=heapsift GIT_COMMITTER_EMAIL=hs@example.invalid
    export GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    i=0
    while [ $i -lt 400 ]; do
        i=$((i + 1))
        j=0
        while [ $j -lt $i ]; do
            j=$((j + 1))
            echo "file $i line $j"
        done >f$i.txt
    done
    runp init git init -q . &&
        runp add git add . &&
        runp commit git commit -q -m one &&
        for i in 3 33 333; do echo change >>f$i.txt; done &&
        runp commit git commit -q -am two &&
        runp log git log --stat --format='%H %s' &&
        runp gc git gc -q &&
        runp fsck git fsck --no-progress 2>&1 &&
        runp count git count-objects -v
}
if command -v git >/dev/null 2>&1; then
    both git gt && {
        add=$(ls "$T/git.hs/prof"/add.*.pb.gz 2>/dev/null | head -n 1)
        # git add compresses every blob: zlib's deflate state is most of what it allocates
        sense "git add" "$add" '^deflateInit2_$|libz' '^\[git\]$|^cmd_add$' 90
        log=$(ls "$T/git.hs/prof"/log.*.pb.gz 2>/dev/null | head -n 1)
        sense "git log" "$log" 'inflate|libz|\[git\]' '^\[git\]$|^cmd_log$' 90
    }
else
    echo "note: git not installed, left out" >&2
fi

# --- gcc --------------------------------------------------------------------------------
cat >"$T/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; char name[32]; int v; };
static struct node *push(struct node *h, int v)
{
    struct node *n = malloc(sizeof *n);
    n->next = h;
    n->v = v;
    snprintf(n->name, sizeof n->name, "n%d", v);
    return n;
}
int main(void)
{
    struct node *h = NULL;
    for (int i = 0; i < 1000; i++)
        h = push(h, i);
    long s = 0;
    for (struct node *n = h; n; n = n->next)
        s += n->v + (long)strlen(n->name);
    printf("%ld\n", s);
    return 0;
}
C
gc() {
    cp "$T/prog.c" prog.c &&
        runp gcc-c gcc -O2 -g -ffile-prefix-map="$PWD"=. -c prog.c -o prog.o &&
        runp gcc-link gcc -o prog prog.o &&
        ./prog && od -An -c prog.o | cksum
}
if command -v gcc >/dev/null 2>&1; then
    both gcc gc && {
        cc1=$(profile_of gcc /cc1)
        sense "gcc (cc1)" "$cc1" '^x(malloc|realloc|calloc)$' '^toplev::main' 50
    }
else
    echo "note: gcc not installed, left out" >&2
fi

[ $RAN -gt 0 ] || { echo "SKIP: none of python3, perl, sqlite3, git, gcc installed"; exit 77; }
finish
