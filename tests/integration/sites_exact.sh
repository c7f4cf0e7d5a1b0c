#!/bin/sh
# sites_exact: every C allocation site of tests/programs/sites.c, profiled at HEAPSIFT_RATE=1,
# must show exactly the values the program reports (--expect) for all four sample types,
# through `go tool pprof -top` (the independent reader) and through `heapsift top`. main's
# cumulative values cover every main-thread site; thread_entry heads site_thread's stacks;
# no heapsift or allocator frame appears in any stack; the libgcc and fp unwinders get the
# leaves (flat inuse_space) exactly right as well.
# go tool pprof runs with -symbolize=none throughout: names, demangling and lines must come
# from the profile, not from the binary.
# usage: sites_exact.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sites-exact
PROG=${HS_SITES_PROG:-$BUILD/programs/sites} # reach_hooks.sh runs it on static-allocator builds
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"

HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/sites.pb.gz" LD_PRELOAD="$LIB" "$PROG" --expect >"$T/expect" \
    2>"$T/stderr" || { rc=$?; cat "$T/stderr" >&2; echo "FAIL: sites exited with status $rc" >&2; exit 1; }
[ -s "$T/sites.pb.gz" ] || { cat "$T/stderr" >&2; echo "FAIL: no profile at $T/sites.pb.gz" >&2; exit 1; }
[ -s "$T/expect" ] || { echo "FAIL: sites printed no expectations" >&2; exit 1; }

col=3
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    if gotop "$T/sites.pb.gz" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
        table <"$T/go.$st" >"$T/go.$st.tab"
        compare "go pprof $st" "$T/expect" "$T/go.$st.tab" $col 0 ||
            { fail "go tool pprof -top -sample_index=$st"; show "$T/go.$st"; }
    else
        fail "go tool pprof -top -sample_index=$st: $(head -3 "$T/go.$st.err")"
    fi
    if hstop "$T/sites.pb.gz" $st >"$T/hs.$st" 2>"$T/hs.$st.err"; then
        table <"$T/hs.$st" >"$T/hs.$st.tab"
        [ -s "$T/hs.$st.tab" ] || { fail "heapsift top --sample-type $st: no table"; show "$T/hs.$st"; }
        compare "heapsift top $st" "$T/expect" "$T/hs.$st.tab" $col 0 ||
            { fail "heapsift top --sample-type $st"; show "$T/hs.$st"; }
    else
        fail "heapsift top --sample-type $st: status $?: $(head -3 "$T/hs.$st.err")"
    fi
    col=$((col + 1))
done

# Names and file:line come from the profile itself (-symbolize=none: pprof does not look at
# the binary): with -lines, each site's row names sites.c and a line number.
if go tool pprof -symbolize=none -top -lines -nodefraction=0 -nodecount=0 "$T/sites.pb.gz" \
    >"$T/lines" 2>&1; then
    for site in site_malloc site_calloc site_thread; do
        grep -Eq " $site [^ ]*sites\.c:[0-9]+\$" "$T/lines" ||
            { fail "no '$site .../sites.c:LINE' row in go tool pprof -top -lines"; show "$T/lines" 25; }
    done
else
    fail "go tool pprof -top -lines: $(head -3 "$T/lines")"
fi

# main's cum: at least every main-thread site, and not the threads' allocations.
for st in inuse_space alloc_space; do
    [ -s "$T/go.$st.tab" ] || continue
    c=$([ $st = inuse_space ] && echo 6 || echo 4)
    awk -F '\t' -v col=$c -v st=$st '
        NR == FNR { split($0, e, " ")
                    if (e[1] != "site_thread" && e[1] != "thread_entry" && e[col] > 0) sum += e[col]
                    if (e[1] == "site_thread") thr = e[col]
                    next }
        $1 == "main" || $1 ~ /^main\(/ { m = $3 + 0 }
        END { if (m < sum || m >= sum + thr) {
                  printf "main cum %s = %d, want >= %d (main-thread sites) and < %d\n", st, m,
                         sum, sum + thr; exit 1 } }' "$T/expect" "$T/go.$st.tab" >&2 ||
        { fail "main's cumulative $st"; show "$T/go.$st"; }
done

# Every unwinder attributes each allocation to the function that called malloc: the leaves
# (flat inuse_space) are exact with HEAPSIFT_UNWIND=libgcc and fp too (fp cannot be trusted
# beyond the leaf in this -fomit-frame-pointer program, so only flat values are checked).
for unwind in libgcc fp; do
    out="$T/sites.$unwind.pb.gz"
    rc=0
    HEAPSIFT_UNWIND=$unwind HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" \
        >/dev/null 2>"$T/stderr.$unwind" || rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
        fail "HEAPSIFT_UNWIND=$unwind: status $rc, profile $([ -s "$out" ] && echo written || echo missing)"
        show "$T/stderr.$unwind" 5
        continue
    fi
    grep -v ' cum ' "$T/expect" >"$T/expect.flat"
    if gotop "$out" inuse_space >"$T/go.$unwind" 2>&1; then
        table <"$T/go.$unwind" >"$T/go.$unwind.tab"
        compare "HEAPSIFT_UNWIND=$unwind inuse_space" "$T/expect.flat" "$T/go.$unwind.tab" 6 0 ||
            { fail "HEAPSIFT_UNWIND=$unwind: leaf attribution"; show "$T/go.$unwind"; }
    else
        fail "HEAPSIFT_UNWIND=$unwind: go tool pprof -top: $(head -3 "$T/go.$unwind")"
    fi
done

# Stacks: site_thread <- thread_entry <- (start_thread/clone or nothing); every site's stack
# reaches main (threads excepted).
if traces "$T/sites.pb.gz" >"$T/traces" 2>"$T/traces.err"; then
    [ -s "$T/traces" ] || fail "go tool pprof -traces printed no stacks"
    awk -F ';' '
        $1 == "site_thread" {
            nthr++
            if ($2 != "thread_entry") { printf "site_thread not called by thread_entry: %s\n", $0; bad++ }
            for (i = 3; i <= NF; i++) if ($i !~ /^(start_thread|clone|clone3|__clone|__clone3|__clone_internal)$/) {
                printf "frame %s above thread_entry: %s\n", $i, $0; bad++; break }
        }
        $1 ~ /^site_/ && $1 != "site_thread" {
            ok = 0; for (i = 2; i <= NF; i++) if ($i == "main") ok = 1
            if (!ok) { printf "main missing from the stack of %s: %s\n", $1, $0; bad++ }
        }
        END { if (nthr == 0) { print "no stack with site_thread as its leaf"; bad++ }
              exit bad > 0 }' "$T/traces" >&2 ||
        { fail "stacks (go tool pprof -traces, collapsed, leaf first)"; show "$T/traces" 60; }
else
    fail "go tool pprof -traces: $(head -3 "$T/traces.err")"
fi

no_profiler_frames "$T/sites.pb.gz"

if [ $FAILS -ne 0 ]; then
    echo "sites_exact: $FAILS check(s) failed" >&2
    exit 1
fi
echo "sites_exact: ok"
