#!/bin/sh
# cxx: the C++ sites of tests/programs/sites_cc.cc at HEAPSIFT_RATE=1: new, new[], nothrow
# new, aligned new, std::vector::reserve, std::string growth and delete of some objects give
# exactly the values the program reports (--expect), under their demangled names
# (sites::make_nodes, ...), through `go tool pprof -top` and `heapsift top`; no stack holds
# an operator new/delete, allocator or heapsift frame, and each site's stack reaches main.
# usage: cxx.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" cxx
PROG=${HS_SITES_PROG:-$BUILD/programs/sites_cc} # reach_hooks.sh runs it on a static tcmalloc build
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"

HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/cc.pb.gz" LD_PRELOAD="$LIB" "$PROG" --expect >"$T/expect" \
    2>"$T/stderr" || { rc=$?; cat "$T/stderr" >&2; echo "FAIL: sites_cc exited with status $rc" >&2; exit 1; }
[ -s "$T/cc.pb.gz" ] || { cat "$T/stderr" >&2; echo "FAIL: no profile at $T/cc.pb.gz" >&2; exit 1; }
[ -s "$T/expect" ] || { echo "FAIL: sites_cc printed no expectations" >&2; exit 1; }

col=3
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    if gotop "$T/cc.pb.gz" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
        table <"$T/go.$st" >"$T/go.$st.tab"
        compare "go pprof $st" "$T/expect" "$T/go.$st.tab" $col 0 ||
            { fail "go tool pprof -top -sample_index=$st"; show "$T/go.$st"; }
        # (a static initializer's _GLOBAL__sub_I_<mangled> name, which go tool pprof leaves
        # as it is, is not a mangled name left over: static tcmalloc's flags have one)
        if grep -v '^_GLOBAL__sub_I_' "$T/go.$st.tab" | grep -q '_Z'; then
            fail "mangled names in go tool pprof -top -sample_index=$st"
            grep -v '^_GLOBAL__sub_I_' "$T/go.$st.tab" | grep '_Z' | head -5 >&2
        fi
    else
        fail "go tool pprof -top -sample_index=$st: $(head -3 "$T/go.$st.err")"
    fi
    if hstop "$T/cc.pb.gz" $st >"$T/hs.$st" 2>"$T/hs.$st.err"; then
        table <"$T/hs.$st" >"$T/hs.$st.tab"
        [ -s "$T/hs.$st.tab" ] || { fail "heapsift top --sample-type $st: no table"; show "$T/hs.$st"; }
        compare "heapsift top $st" "$T/expect" "$T/hs.$st.tab" $col 0 ||
            { fail "heapsift top --sample-type $st"; show "$T/hs.$st"; }
    else
        fail "heapsift top --sample-type $st: status $?: $(head -3 "$T/hs.$st.err")"
    fi
    col=$((col + 1))
done

# Stacks: each "flat" site is the leaf of its own stacks and every site's stack reaches main.
if traces "$T/cc.pb.gz" >"$T/traces" 2>"$T/traces.err"; then
    [ -s "$T/traces" ] || fail "go tool pprof -traces printed no stacks"
    awk -F ';' '
        NR == FNR { split($0, e, " "); kind[e[1]] = e[2]; next }
        { for (i = 1; i <= NF; i++) {
              nm = $i; sub(/\(.*$/, "", nm)
              if (!(nm in kind)) continue
              seen[nm] = 1
              if (kind[nm] == "flat" && i != 1) { printf "%s is not the leaf: %s\n", nm, $0; bad++ }
              ok = 0; for (j = i + 1; j <= NF; j++) if ($j == "main" || $j ~ /^main\(/) ok = 1
              if (!ok) { printf "main missing above %s: %s\n", nm, $0; bad++ }
              break
          } }
        END { for (k in kind) if (!(k in seen)) { printf "no stack contains %s\n", k; bad++ }
              exit bad > 0 }' "$T/expect" "$T/traces" >&2 ||
        { fail "stacks (go tool pprof -traces, collapsed, leaf first)"; show "$T/traces" 60; }
else
    fail "go tool pprof -traces: $(head -3 "$T/traces.err")"
fi

no_profiler_frames "$T/cc.pb.gz"

if [ $FAILS -ne 0 ]; then
    echo "cxx: $FAILS check(s) failed" >&2
    exit 1
fi
echo "cxx: ok"
