#!/bin/sh
# names_rust: Rust names as a Rust user reads them (issue 38). tests/programs/rust/names.rs,
# built here with rustc as crate rjemu, once with legacy mangling
# (_ZN5rjemu9hold_site17h<hash>E) and once with -C symbol-mangling-version=v0
# (_RNvCs<hash>_5rjemu9hold_site), runs under `heapsift run --rate 1 --leaks 1`, N = 1000
# and N = 2000. For each build:
#  - the profile's Function.name is demangled, hash dropped, and the mangled name is kept
#    (system_name); `go tool pprof -top` with and without its own symbolizer
#    shows rjemu::hold_site, rjemu::inner::deep_site and rjemu::churn_site with exactly the
#    values names.rs allocates (N * 1008, 302400 live; N * 5000 allocated), and so does
#    `heapsift top`;
#  - every view names them so and never prints a mangled name: top, traces, peek, tree,
#    list, flamegraph (the SVG's text), graph (DOT), diff and suspects (N = 1000 against
#    2000: hold_site grows by 1008000 bytes, as go tool pprof -diff_base says), lifetimes,
#    the leak report at exit and the web UI's JSON API (/api/top, /api/flame, /api/peek);
#  - the other routes a name takes: symbol tables only (HEAPSIFT_SYMBOLIZE=names), named by
#    the CLI from the binary (HEAPSIFT_SYMBOLIZE=none), and a profile whose names are
#    still mangled (go tool pprof -symbolize=local,demangle=none wrote it: a file from
#    another tool) read by every view;
#  - rustc itself compiling names.rs under `heapsift run`: no function of its profile is
#    left mangled, in the file and in heapsift top.
# A missing rustc fails the test (scripts/setup.sh installs Debian's).
# usage: names_rust.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" names_rust
SRC=$(cd "$2" && pwd)
. "$SRC/tests/web/lib.sh"
hs_need_go
hs_need_built "$LIB" "$CLI"
RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || [ ! -x "${HOME:-/root}/.cargo/bin/rustc" ] || RUSTC=${HOME:-/root}/.cargo/bin/rustc
[ -n "$RUSTC" ] || { echo "FAIL: no rustc (scripts/setup.sh installs Debian's rustc)" >&2; exit 1; }
export GOCACHE="$T/gocache" GOPATH="$T/gopath"

# A mangled name of any form: C++ or Rust legacy, Rust v0, a legacy hash left behind.
MANGLED='_ZN[0-9]+[A-Za-z_$]|_RN[vtCsMXYINB]|_RC[sI]|::h[0-9a-f]{16}([^0-9a-f]|$)|17h[0-9a-f]{16}E'

# unmangled WHAT FILE...: no mangled name in the files
unmangled() {
    what=$1
    shift
    if grep -Eh "$MANGLED" "$@" >"$T/mangled" 2>/dev/null; then
        fail "$what: mangled names"
        show "$T/mangled" 5
    fi
}

# has WHAT FILE NAME...: FILE holds each NAME (fixed strings)
has() {
    what=$1 file=$2
    shift 2
    for n in "$@"; do
        grep -qF -- "$n" "$file" || { fail "$what: no '$n'"; show "$file" 15; }
    done
}

# cum PROFILE SAMPLE_TYPE ROW go|hs: the cum value of ROW in go tool pprof -top or heapsift top
cum() {
    if [ "$4" = go ]; then gotop "$1" "$2"; else hstop "$1" "$2"; fi | table |
        awk -F '\t' -v row="$3" '$1 == row { print $3; f = 1; exit } END { if (!f) print "absent" }'
}

# exact PROFILE SAMPLE_TYPE ROW WANT: go tool pprof and heapsift top both give WANT as cum
exact() {
    for r in go hs; do
        v=$(cum "$1" "$2" "$3" $r)
        [ "$v" = "$4" ] || fail "$(basename "$1"): $r top $2: cum of $3 is $v, want $4"
    done
}

# --- the two builds ---------------------------------------------------------------------
"$RUSTC" -O -g --crate-name rjemu -o "$T/legacy" "$SRC/tests/programs/rust/names.rs" \
    2>"$T/rustc.err" || { show "$T/rustc.err"; echo "FAIL: rustc names.rs" >&2; exit 1; }
"$RUSTC" -O -g --crate-name rjemu -C symbol-mangling-version=v0 -o "$T/v0" \
    "$SRC/tests/programs/rust/names.rs" 2>"$T/rustc.err" ||
    { show "$T/rustc.err"; echo "FAIL: rustc -C symbol-mangling-version=v0 names.rs" >&2; exit 1; }
nm "$T/legacy" | grep -Eq ' _ZN5rjemu9hold_site17h[0-9a-f]{16}E$' ||
    fail "legacy: no _ZN5rjemu9hold_site17h...E in its symbol table"
nm "$T/v0" | grep -Eq ' _RNvCs[0-9A-Za-z_]+_5rjemu9hold_site$' ||
    fail "v0: no _RNvCs..._5rjemu9hold_site in its symbol table"

# profile NAME PROG N [VAR=VALUE...]: PROG N under heapsift run at rate 1 with the leak
# report into $T/NAME.pb.gz ($T/NAME.out, $T/NAME.err)
profile() {
    name=$1 prog=$2 n=$3
    shift 3
    env "$@" "$CLI" run -q --rate 1 --leaks 1 -o "$T/$name.pb.gz" -- "$T/$prog" "$n" \
        >"$T/$name.out" 2>"$T/$name.err" || { fail "$name: heapsift run: status $?"; show "$T/$name.err"; }
    grep -q "^held $n " "$T/$name.out" || fail "$name: output changed: $(cat "$T/$name.out")"
}

# views NAME BASE: every view of $T/NAME.pb.gz (diff and suspects against $T/BASE.pb.gz)
# into $T/NAME.v/, each checked for the sites' names and for mangled names
views() {
    p=$T/$1.pb.gz b=$T/$2.pb.gz o=$T/$1.v
    mkdir -p "$o"
    "$CLI" top "$p" >"$o/top"
    "$CLI" top --sample-type alloc_space "$p" >"$o/top_alloc"
    "$CLI" traces "$p" >"$o/traces"
    "$CLI" peek hold_site "$p" >"$o/peek"
    "$CLI" tree "$p" >"$o/tree"
    "$CLI" list hold_site "$p" >"$o/list"
    "$CLI" flamegraph -o "$o/flame.svg" "$p"
    "$CLI" graph -o "$o/graph.dot" "$p"
    "$CLI" diff "$b" "$p" >"$o/diff"
    "$CLI" suspects --all "$b" "$p" >"$o/suspects" 2>"$o/suspects.err"
    "$CLI" suspects --json "$b" "$p" >"$o/suspects.json" 2>"$o/suspects.err"
    "$CLI" lifetimes "$p" >"$o/lifetimes"
    "$CLI" lifetimes --json "$p" >"$o/lifetimes.json"
    for v in top traces tree flame.svg; do
        has "$1 $v" "$o/$v" rjemu::hold_site rjemu::inner::deep_site rjemu::main
    done
    has "$1 top --sample-type alloc_space" "$o/top_alloc" rjemu::churn_site
    has "$1 peek" "$o/peek" rjemu::hold_site rjemu::main
    has "$1 list" "$o/list" "ROUTINE ======================== rjemu::hold_site"
    has "$1 graph" "$o/graph.dot" 'rjemu\nhold_site' 'rjemu\ninner\ndeep_site'
    has "$1 diff" "$o/diff" rjemu::hold_site
    # (their text cuts a stack at six frames, allocator frames first: the JSON has them all)
    has "$1 suspects" "$o/suspects.json" '"rjemu::hold_site", "rjemu::main"'
    has "$1 lifetimes" "$o/lifetimes.json" '"rjemu::churn_site", "rjemu::main"' \
        '"rjemu::hold_site", "rjemu::main"' '"rjemu::inner::deep_site", "rjemu::main"'
    unmangled "$1 views" "$o"/*
}

# web NAME: heapsift web over $T/NAME.pb.gz; its JSON API names the sites
web() {
    web_start "$T/$1.web" "$T/$1.pb.gz"
    [ -n "$URL" ] || return 0
    web_api "top?target=0&id=1" >"$T/$1.v/api_top.json"
    web_api "flame?target=0&id=1" >"$T/$1.v/api_flame.json"
    web_api "peek?target=0&id=1&fn=hold_site" >"$T/$1.v/api_peek.json"
    for a in top flame peek; do
        has "$1 /api/$a" "$T/$1.v/api_$a.json" rjemu::hold_site
    done
    has "$1 /api/top" "$T/$1.v/api_top.json" rjemu::inner::deep_site
    unmangled "$1 web API" "$T/$1.v"/api_*.json
    web_stop
    # stopped: the exit trap (which kills WEB_PIDS, failing under set -e once they are
    # gone) goes back to removing T
    WEB_PIDS=""
    trap 'rm -rf "$T"' EXIT INT TERM
}

for kind in legacy v0; do
    profile $kind $kind 1000
    profile ${kind}_2 $kind 2000
    p=$T/$kind.pb.gz
    # the file's names, read by go tool pprof and heapsift top, with exact values
    exact "$p" inuse_space rjemu::hold_site 1008000
    exact "$T/${kind}_2.pb.gz" inuse_space rjemu::hold_site 2016000
    exact "$p" inuse_space rjemu::inner::deep_site 302400
    exact "$p" alloc_space rjemu::churn_site 5000000
    gotop "$p" inuse_space >"$T/$kind.gotop"
    go tool pprof -top -nodecount=0 "$p" >"$T/$kind.gotop_sym" 2>&1
    go tool pprof -symbolize=none -top -unit=B -nodecount=0 -sample_index=inuse_space \
        -diff_base "$T/$kind.pb.gz" "$T/${kind}_2.pb.gz" >"$T/$kind.godiff" 2>&1
    v=$(table <"$T/$kind.godiff" | awk -F '\t' '$1 == "rjemu::hold_site" { print $3 }')
    [ "$v" = 1008000 ] || fail "$kind: go tool pprof -diff_base: hold_site grew by '$v', want 1008000"
    for f in gotop gotop_sym; do
        has "$kind go tool pprof $f" "$T/$kind.$f" rjemu::hold_site rjemu::inner::deep_site
    done
    unmangled "$kind go tool pprof -top" "$T/$kind.gotop" "$T/$kind.gotop_sym" "$T/$kind.godiff"
    # the leak report: the sites' frames by their names
    has "$kind leak report" "$T/$kind.err" " in rjemu::hold_site " " in rjemu::inner::deep_site " \
        " in rjemu::main "
    unmangled "$kind leak report" "$T/$kind.err"
    views $kind ${kind}_2
    web $kind
done
# system_name keeps the mangled name: the profile's string table holds it (go tool pprof
# prints no system_name)
for kind in legacy v0; do
    zcat "$T/$kind.pb.gz" >"$T/$kind.pb"
    pat='_ZN5rjemu9hold_site17h[0-9a-f]{16}E'
    [ $kind = v0 ] && pat='_RNvCs[0-9A-Za-z_]+_5rjemu9hold_site'
    grep -aEq "$pat" "$T/$kind.pb" || fail "$kind: the profile does not keep the mangled name"
done

# --- the other routes a name takes ----------------------------------------------------------
# mangle mangled|oldhs IN OUT: IN with Function.name set back to the mangled system_name
# (mangled), or for Rust legacy names to NAME::h<hash> (oldhs), read and written with
# heapsift's own codec (none of its readers, which demangle)
cat >"$T/mangle.c" <<'CSRC'
#include "base/fileio.h"
#include "base/gzip.h"
#include "model/pprof.h"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    hs_buf_t f = HS_BUF_INIT, raw = HS_BUF_INIT;
    hs_profile_t *p = NULL;
    char err[256] = "", buf[8192];
    int n = 0;
    if (argc != 4 || hs_read_file(argv[2], &f) || hs_gunzip_auto(f.data, f.len, &raw, err, 256) ||
        hs_pprof_decode(raw.data, raw.len, &p, err, sizeof(err)))
        return fprintf(stderr, "mangle: %s\n", err), 1;
    for (size_t i = 0; i < p->nfunctions; i++) {
        hs_function_t *fn = &p->functions[i];
        const char *sys = hs_profile_get_str(p, fn->system_name);
        size_t len = strlen(sys);
        if (strncmp(sys, "_Z", 2) != 0 && strncmp(sys, "_R", 2) != 0)
            continue;
        if (strcmp(argv[1], "mangled") == 0) {
            fn->name = fn->system_name;
        } else if (len > 20 && strncmp(sys + len - 20, "17h", 3) == 0 && sys[len - 1] == 'E') {
            snprintf(buf, sizeof(buf), "%s::h%.16s", hs_profile_get_str(p, fn->name),
                     sys + len - 17);
            fn->name = hs_profile_str(p, buf);
        } else {
            continue;
        }
        n++;
    }
    printf("%d names\n", n);
    return n == 0 || hs_pprof_write_file(p, argv[3]) != 0;
}
CSRC
set --
for c in model/profile model/pprof base/gzip base/fileio base/fdio base/pb base/buf base/utf8; do set -- "$@" "$SRC/src/common/$c.c"; done
"${CC:-cc}" -std=gnu11 -O1 -I"$SRC/src/common" -o "$T/mangle" "$T/mangle.c" "$@" -lz ||
    { echo "FAIL: cannot build the mangling helper" >&2; exit 1; }

for kind in legacy v0; do
    # symbol tables only, in the process
    profile ${kind}_names $kind 1000 HEAPSIFT_SYMBOLIZE=names
    exact "$T/${kind}_names.pb.gz" inuse_space rjemu::hold_site 1008000
    # no names in the process: the CLI names the frames from the binary
    profile ${kind}_none $kind 1000 HEAPSIFT_SYMBOLIZE=none
    hstop "$T/${kind}_none.pb.gz" inuse_space >"$T/${kind}_none.top"
    has "$kind named by the CLI" "$T/${kind}_none.top" rjemu::hold_site rjemu::inner::deep_site
    unmangled "$kind named by the CLI" "$T/${kind}_none.top"
    # files whose names are still mangled: as a tool that does not demangle writes them
    # (Function.name = system_name), and as older heapsift wrote Rust legacy names
    # (__cxa_demangle's "rjemu::hold_site::h<hash>")
    for form in mangled oldhs; do
        [ $form = oldhs ] && [ $kind = v0 ] && continue # v0 names never had a hash
        "$T/mangle" $form "$T/$kind.pb.gz" "$T/${kind}_$form.pb.gz" >"$T/${kind}_$form.log" 2>&1 ||
            { fail "$kind: mangle $form"; show "$T/${kind}_$form.log"; continue; }
        cp "$T/${kind}_2.pb.gz" "$T/${kind}_${form}_2.pb.gz"
        gotop "$T/${kind}_$form.pb.gz" inuse_space >"$T/${kind}_$form.go" 2>&1
        if [ $form = mangled ]; then
            grep -Eq "$MANGLED" "$T/${kind}_$form.go" ||
                { fail "$kind: the mangled file has no mangled name"; show "$T/${kind}_$form.go"; }
        else
            grep -Eq 'rjemu::hold_site::h[0-9a-f]{16}' "$T/${kind}_$form.go" ||
                { fail "$kind: the old-heapsift file has no hash"; show "$T/${kind}_$form.go"; }
        fi
        # go tool pprof -symbolize=none reads the names as written; heapsift demangles them
        v=$(cum "$T/${kind}_$form.pb.gz" inuse_space rjemu::hold_site go)
        [ "$v" = absent ] || fail "$kind $form file: go tool pprof shows rjemu::hold_site ($v)"
        v=$(cum "$T/${kind}_$form.pb.gz" inuse_space rjemu::hold_site hs)
        [ "$v" = 1008000 ] || fail "$kind $form file: heapsift top: hold_site $v, want 1008000"
        views ${kind}_$form ${kind}_${form}_2
        web ${kind}_$form
    done
done

# --- rustc itself -------------------------------------------------------------------------
# (an rlib: rustc writes it itself, no linker runs under the profiler; a fixed seed, so that
# which allocations are sampled does not change from run to run)
"$CLI" run -q --seed 1 -o "$T/rustc.pb.gz" -- "$RUSTC" -O --crate-type rlib --crate-name rjemu \
    -o "$T/librjemu.rlib" "$SRC/tests/programs/rust/names.rs" >"$T/rustc.out" 2>&1 ||
    { fail "rustc under heapsift run"; show "$T/rustc.out"; }
go tool pprof -symbolize=none -traces "$T/rustc.pb.gz" >"$T/rustc.traces" 2>&1
hstop "$T/rustc.pb.gz" alloc_space >"$T/rustc.top"
named=$(grep -c 'rustc_' "$T/rustc.traces" || true)
[ "$named" -gt 100 ] || { fail "rustc: $named frames of rustc_* crates, want more than 100"; show "$T/rustc.traces"; }
unmangled "rustc's profile (go tool pprof -traces)" "$T/rustc.traces"
unmangled "rustc's profile (heapsift top)" "$T/rustc.top"
echo "names_rust: rustc's profile: $named frames in rustc_* crates, all demangled"

[ "$FAILS" -eq 0 ] || { echo "names_rust: $FAILS failure(s)" >&2; exit 1; }
echo "names_rust: ok"
exit 0
