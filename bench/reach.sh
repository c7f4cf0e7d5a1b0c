#!/bin/sh
# bench/reach.sh: what heapsift's in-place hooks (src/preload/reach/hooks.c, patch.c; issue 26)
# cost a program that links its allocator statically, where symbol interposition cannot
# see its malloc. churn and cppmap are linked against Debian's static allocators:
#   tcmalloc          libtcmalloc.a, the full gperftools one (-lunwind; -u HeapProfilerStart
#                     pulls in heap-profiler.o, without which HEAPPROFILE does nothing)
#   tcmalloc_minimal  libtcmalloc_minimal.a (no profiler)
#   jemalloc          libjemalloc_pic.a (Debian builds it with --enable-prof)
# Part 1, wall time: every (allocator, configuration) once per round and workload, the
# order rotated by one place per round, ratios within a round against the same allocator
# with no profiler, medians over rounds (the peers part's method, bench/peers.sh):
#   none         the static program alone
#   hs-default   LD_PRELOAD=libheapsift.so, default rate (512 KiB), at-exit profile; a run
#                counts only if stderr says "reach: hooked in place" (and nothing
#                "bypass"es) and `heapsift top` finds the workload's allocation site in
#                the profile (churn: leaf_alloc, cppmap: make_record)
#   tc-sample    tcmalloc's own sampler at 512 KiB (TCMALLOC_SAMPLE_PARAMETER=524288; the
#                default is 0, off): what the sampling costs; it writes nothing (a program
#                reads the sample through MallocExtension::GetHeapSample)
#   gperf-heap   HEAPPROFILE=prefix: gperftools' heap profiler, which records every
#                allocation (it does not sample; TCMALLOC_SAMPLE_PARAMETER does not apply
#                to it) and writes prefix.NNNN.heap every 1 GiB allocated and at exit; a
#                run counts only if it wrote a .heap file
#   jemalloc-prof MALLOC_CONF=prof:true,lg_prof_sample:19,prof_final:true: jemalloc's
#                sampler at 512 KiB, writing its profile at exit as heapsift does; a run
#                counts only if jemalloc wrote it and printed no complaint (a build
#                without --enable-prof says "Invalid conf pair")
# Part 2, instructions (callgrind, --smc-check=all since the code is patched at run time,
# --toggle-collect=run_pairs): bench/pairs with N and 2N malloc(64)+free pairs, linked
# statically (heapsift through the hooks) and dynamically with the allocator's shared
# library preloaded behind heapsift (interposition, as targets.sh measures "on jemalloc"),
# without heapsift and at HEAPSIFT_RATE=2^40 (nothing sampled); the extra per pair is
# ((hs(2N) - hs(N)) - (plain(2N) - plain(N))) / N, split into heapsift's own malloc and
# free, the hooks' thunks (hs_thunk_*), and everything outside libheapsift.so over the
# plain run (the patched entry's jmp, the stub's jmp, the trampoline's endbr64 and jump
# back); and, per allocator, the hooked route's function-level breakdown.
# Part 3, the workloads' instructions (callgrind, load-independent, what the noisy wall
# ratios stand on): churn 2 x IR_OPS and cppmap IR_CPPMAP_OPS, whole process and loop
# (worker_main, run inclusive), no profiler against heapsift at the default rate, linked
# statically (the hooks) and dynamically on the allocator's shared library (interposition).
# usage: sh bench/reach.sh BUILD [--quick] [--record] [--part]
#   --quick   1 round, small inputs, 10 s time-out: checks that everything runs
#   --part    print the tables only (bench/run.sh --reach includes them in its report)
# env: ROUNDS (5; quick 1), OPS (churn's per thread, 8000000; quick 100000), CPPMAP_OPS
#   (400000; quick 40000), TIMEOUT (60 s; quick 10), PAIRS_N (500000; quick 100000),
#   IR_OPS (churn's per thread under callgrind, 500000; quick 20000), IR_CPPMAP_OPS
#   (50000; quick 5000),
#   ALLOCATORS ("tcmalloc tcmalloc_minimal jemalloc"), CC (gcc), CXX (g++)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/common.sh
. "$here/common.sh"
# shellcheck source=bench/record.sh
. "$here/record.sh"
r_usage() {
    echo "usage: sh bench/reach.sh BUILD [--quick] [--record] [--part]" >&2
    exit 1
}
build="" record=0 quick=${QUICK:-0} part=0
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    --record) record=1 ;;
    --part) part=1 ;;
    -*) r_usage ;;
    *)
        [ -z "$build" ] || r_usage
        build=$(cd "$arg" && pwd)
        ;;
    esac
done
[ -n "$build" ] || r_usage
lib=$build/libheapsift.so
cli=$build/heapsift
[ -f "$lib" ] && [ -x "$cli" ] || { echo "reach: no $lib or $cli (build first)" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "reach: the in-place hooks are x86-64 only" >&2; exit 1; }
if [ "$quick" -eq 1 ]; then
    rounds=${ROUNDS:-1} ops=${OPS:-100000} cm_ops=${CPPMAP_OPS:-40000}
    timeout_s=${TIMEOUT:-10} pn=${PAIRS_N:-100000}
    ir_ops=${IR_OPS:-20000} ir_cm=${IR_CPPMAP_OPS:-5000}
else
    rounds=${ROUNDS:-5} ops=${OPS:-8000000} cm_ops=${CPPMAP_OPS:-400000}
    timeout_s=${TIMEOUT:-60} pn=${PAIRS_N:-500000}
    ir_ops=${IR_OPS:-500000} ir_cm=${IR_CPPMAP_OPS:-50000}
fi
allocs=${ALLOCATORS:-tcmalloc tcmalloc_minimal jemalloc}
for a in $allocs; do
    case $a in
    tcmalloc | tcmalloc_minimal | jemalloc) ;;
    *) echo "reach: unknown allocator $a (tcmalloc tcmalloc_minimal jemalloc)" >&2; exit 1 ;;
    esac
done
cc=${CC:-gcc}
cxx=${CXX:-g++}

[ "$part" -eq 1 ] || sh "$here/setup.sh"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-reach.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)

# The allocator's static archive and link flags; its shared library (part 2).
r_static() {
    case $1 in
    tcmalloc) echo "-Wl,-u,HeapProfilerStart -Wl,-Bstatic -l:libtcmalloc.a -Wl,-Bdynamic -lunwind" ;;
    tcmalloc_minimal) echo "-Wl,-Bstatic -l:libtcmalloc_minimal.a -Wl,-Bdynamic" ;;
    jemalloc) echo "-Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic -lm -ldl" ;;
    esac
}
r_shared() {
    case $1 in
    tcmalloc) echo "$libdir/libtcmalloc.so.4" ;;
    tcmalloc_minimal) echo "$libdir/libtcmalloc_minimal.so.4" ;;
    jemalloc) echo "$libdir/libjemalloc.so.2" ;;
    esac
}
r_configs() {
    case $1 in
    tcmalloc) echo "none hs-default tc-sample gperf-heap" ;;
    tcmalloc_minimal) echo "none hs-default" ;;
    jemalloc) echo "none hs-default jemalloc-prof" ;;
    esac
}

# Compile once, link once per allocator: BIN-ALLOC for churn, cppmap and pairs.
echo "reach: compiling churn, cppmap and pairs against $allocs" >&2
"$cc" -std=gnu11 -pthread -O2 -g -c -o "$tmp/churn.o" "$here/churn.c"
"$cxx" -std=gnu++17 -O2 -g -c -o "$tmp/cppmap.o" "$here/cppmap.cc"
"$cc" -std=gnu11 -O2 -g -c -o "$tmp/pairs.o" "$here/pairs.c"
"$cc" -o "$tmp/pairs-dynamic" "$tmp/pairs.o"
"$cc" -pthread -o "$tmp/churn-dynamic" "$tmp/churn.o"
"$cxx" -o "$tmp/cppmap-dynamic" "$tmp/cppmap.o"
for a in $allocs; do
    for p in churn cppmap pairs; do
        # shellcheck disable=SC2046 # the flags are split on purpose
        "$cxx" -pthread -o "$tmp/$p-$a" "$tmp/$p.o" $(r_static "$a")
        nm "$tmp/$p-$a" | grep -q ' T malloc$' ||
            { echo "reach: $p-$a: malloc is not the executable's own" >&2; exit 1; }
    done
done

# Does each allocator's own profiler work in its static build? A configuration that does
# not is dropped, and the report says why.
notes=""
pairs_list=""
for a in $allocs; do
    for c in $(r_configs "$a"); do
        case $c in
        gperf-heap)
            mkdir -p "$tmp/check"
            HEAPPROFILE=$tmp/check/gp "$tmp/churn-$a" 1 1000 >/dev/null 2>&1 || true
            if ! ls "$tmp"/check/gp.*.heap >/dev/null 2>&1; then
                notes="$notes- $a: HEAPPROFILE wrote no .heap file: gperf-heap not run\n"
                continue
            fi
            ;;
        jemalloc-prof)
            mkdir -p "$tmp/check"
            MALLOC_CONF=prof:true,lg_prof_sample:19,prof_final:true,prof_prefix:$tmp/check/je \
                "$tmp/churn-$a" 1 1000 >/dev/null 2>"$tmp/check/je.err" || true
            if grep -q '<jemalloc>' "$tmp/check/je.err" ||
                ! ls "$tmp"/check/je.*.heap >/dev/null 2>&1; then
                why=$(grep -m 1 '<jemalloc>' "$tmp/check/je.err" || true)
                notes="$notes- $a: MALLOC_CONF=prof:true,lg_prof_sample:19 in the static build:"
                notes="$notes ${why:-no profile written}: jemalloc-prof not run\n"
                continue
            fi
            ;;
        esac
        pairs_list="$pairs_list $a:$c"
    done
done
rm -rf "$tmp/check"

r_workload() {
    case $1 in
    churn) w_cmd="$tmp/churn-$2 2 $ops" w_site=leaf_alloc ;;
    cppmap) w_cmd="$tmp/cppmap-$2 $cm_ops 100000" w_site=make_record ;;
    esac
}

# reach_run WORKLOAD ROUND ALLOC CONFIG: appends "workload round alloc config status wall_s
# maxrss_kib throughput cpu_s same check" to $tmp/runs.
reach_run() {
    w=$1 r=$2 a=$3 c=$4
    r_workload "$w" "$a"
    rm -rf "$tmp/prof" && mkdir "$tmp/prof"
    set -- env
    case $c in
    none) ;;
    hs-default) set -- "$@" "LD_PRELOAD=$lib" "HEAPSIFT_OUT=$tmp/prof/hs.pb.gz" HEAPSIFT_SEED=1 ;;
    tc-sample) set -- "$@" TCMALLOC_SAMPLE_PARAMETER=524288 ;;
    gperf-heap) set -- "$@" "HEAPPROFILE=$tmp/prof/gp" ;;
    jemalloc-prof)
        set -- "$@" "MALLOC_CONF=prof:true,lg_prof_sample:19,prof_final:true,prof_prefix:$tmp/prof/je"
        ;;
    esac
    # shellcheck disable=SC2086 # w_cmd is split on purpose
    set -- "$@" $w_cmd
    status=0
    t0=$(date +%s.%N)
    timeout -k 5 "$timeout_s" /usr/bin/time -f "%M %U %S" -o "$tmp/time" "$@" </dev/null \
        >"$tmp/out" 2>"$tmp/err" || status=$?
    t1=$(date +%s.%N)
    set -- $(tail -n 1 "$tmp/time" 2>/dev/null || true)
    rss=${1:-0} cpu=$(awk -v u="${2:-0}" -v s="${3:-0}" 'BEGIN { printf "%.2f", u + s }')
    case "$rss" in '' | *[!0-9]*) rss=0 ;; esac
    st=ok check=-
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        st=timeout
    elif [ "$status" -ne 0 ]; then
        st=fail
        echo "reach: warning: $w-$a under $c exited with status $status:" >&2
        tail -n 5 "$tmp/err" >&2
    fi
    if [ "$st" = ok ]; then
        case $c in
        hs-default)
            if ! grep -q '^heapsift: reach: hooked in place' "$tmp/err" || grep -q 'bypass' "$tmp/err"
            then
                st=fail
                echo "reach: warning: $w-$a: heapsift did not say it hooked in place:" >&2
                grep 'reach' "$tmp/err" >&2 || true
            elif ! "$cli" top --sample-type alloc_space -n 1000 "$tmp/prof/hs.pb.gz" 2>/dev/null |
                grep -q "$w_site"; then
                st=fail
                echo "reach: warning: $w-$a: $w_site is not in heapsift's profile" >&2
            else
                check=1
            fi
            ;;
        gperf-heap)
            check=$(find "$tmp/prof" -name 'gp.*.heap' | wc -l)
            [ "$check" -gt 0 ] || { st=fail; echo "reach: warning: $w-$a: no .heap file" >&2; }
            ;;
        jemalloc-prof)
            if grep -q '<jemalloc>' "$tmp/err" || ! ls "$tmp"/prof/je.*.heap >/dev/null 2>&1; then
                st=fail
                echo "reach: warning: $w-$a: jemalloc wrote no profile: $(head -n 1 "$tmp/err")" >&2
            else
                check=1
            fi
            ;;
        esac
    fi
    tput=$(sed -n 's/^[a-z]*\/s: //p' "$tmp/out" | head -n 1)
    grep -v -e '^wall:' -e '^[a-z]*/s:' "$tmp/out" >"$tmp/out.cmp" || true
    same=-
    if [ "$c" = none ] && [ "$st" = ok ] && [ ! -f "$tmp/ref.$w" ]; then
        cp "$tmp/out.cmp" "$tmp/ref.$w"
    fi
    if [ "$st" = ok ] && [ -f "$tmp/ref.$w" ]; then
        if cmp -s "$tmp/out.cmp" "$tmp/ref.$w"; then same=yes; else same=NO; fi
    fi
    echo "$w $r $a $c $st $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" \
        "$rss ${tput:--} $cpu $same $check" >>"$tmp/runs"
    [ "$st" = timeout ] && echo "$w $a $c" >>"$tmp/timed_out"
    rm -rf "$tmp/prof" "$tmp/time"
    return 0
}

# The Markdown table of workload $1 from $tmp/runs.
reach_table() {
    awk -v w="$1" -v pairs="$pairs_list" -v tmo="$timeout_s" "$awk_lib"'
$1 == w {
    k = $3 SUBSEP $4
    st[$2, k] = $5; wall[$2, k] = $6; rss[$2, k] = $7; tp[$2, k] = $8; cpu[$2, k] = $9
    same[$2, k] = $10; chk[$2, k] = $11; rounds[$2] = 1
}
function ok(r, k) { return st[r, k] == "ok" }
function f3(x) { return x == "" ? "-" : sprintf("%.3f", x) }
END {
    print "| allocator (static) | configuration | runs | wall ratio vs none (median) | range | throughput ratio vs none | CPU time ratio vs none | median wall (s) | median max RSS (MiB) | RSS over none (MiB) | profile checked | same output |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    np = split(pairs, ps, " ")
    for (i = 1; i <= np; i++) {
        split(ps[i], kv, ":"); a = kv[1]; c = kv[2]; k = a SUBSEP c; b = a SUBSEP "none"
        rv = ""; tr = ""; cr = ""; wl = ""; rs = ""; dm = ""; ck = ""
        nok = 0; ntmo = 0; nfail = 0; diff = 0; nrun = 0
        for (r in rounds) {
            if (!((r, k) in st)) continue
            nrun++
            if (st[r, k] == "timeout") { ntmo++; continue }
            if (!ok(r, k)) { nfail++; continue }
            nok++
            if (same[r, k] == "NO") diff++
            if (chk[r, k] != "-") ck = ck " " chk[r, k]
            wl = wl " " wall[r, k]; rs = rs " " rss[r, k] / 1024
            if (ok(r, b)) {
                rv = rv " " wall[r, k] / wall[r, b]
                dm = dm " " (rss[r, k] - rss[r, b]) / 1024
                if (cpu[r, b] > 0) cr = cr " " cpu[r, k] / cpu[r, b]
                if (tp[r, k] != "-" && tp[r, k] > 0 && tp[r, b] != "-") tr = tr " " tp[r, b] / tp[r, k]
            }
        }
        if (nrun == 0) continue
        runs = nok "/" nrun
        if (ntmo) runs = runs ", " ntmo " timeout"
        if (nfail) runs = runs ", " nfail " failed"
        if (c == "hs-default") check = "hooked in place, site in profile: " split(ck, t, " ") "/" nrun
        else if (c == "gperf-heap") check = ".heap files written: " split(ck, t, " ") "/" nrun (ck == "" ? "" : " (median " median(ck) " files)")
        else if (c == "jemalloc-prof") check = "profile written at exit: " split(ck, t, " ") "/" nrun
        else if (c == "tc-sample") check = "writes nothing"
        else check = "-"
        if (nok == 0) {
            printf "| %s | %s | %s | %s | - | - | - | - | - | - | %s | - |\n", a, c, runs,
                (ntmo ? "timeout (> " tmo " s)" : "failed"), check
            continue
        }
        printf "| %s | %s | %s | %s | %s..%s | %s | %s | %s | %.1f | %s | %s | %s |\n", a, c, runs,
            f3(median(rv)), f3(extreme(rv, 0)), f3(extreme(rv, 1)), f3(median(tr)), f3(median(cr)),
            f3(median(wl)), median(rs), (c == "none" ? "-" : sprintf("%+.1f", median(dm))), check,
            (diff ? "NO (" diff ")" : "yes")
    }
}' "$tmp/runs"
}

# Part 1.
: >"$tmp/runs"
: >"$tmp/timed_out"
npairs=$(echo $pairs_list | wc -w)
echo "reach: $rounds rounds of [churn cppmap] x $npairs configurations, time-out $timeout_s s" >&2
r=0
while [ "$r" -lt "$rounds" ]; do
    order=$(echo $pairs_list | tr ' ' '\n' | awk -v k="$r" -v n="$npairs" \
        '{ line[NR - 1] = $0 } END { for (i = 0; i < n; i++) print line[(i + k) % n] }')
    for w in churn cppmap; do
        printf "  round %d/%d %s:" $((r + 1)) "$rounds" "$w" >&2
        for kv in $order; do
            a=${kv%%:*} c=${kv#*:}
            grep -qx "$w $a $c" "$tmp/timed_out" && continue
            printf " %s/%s" "$a" "$c" >&2
            reach_run "$w" "$r" "$a" "$c"
        done
        echo >&2
    done
    r=$((r + 1))
done

# Part 2. cg_run ALLOC ROUTE CONFIG N: one callgrind run; appends "alloc route config n
# total heapsift_hooks thunks outside" to $tmp/cg and the run's per-function Ir to
# $tmp/cgf ("alloc route config n Ir object:function").
cg_run() {
    a=$1 route=$2 c=$3 k=$4
    set -- env "HEAPSIFT_OUT=$tmp/cg.%p.pb.gz"
    exe=$tmp/pairs-$a
    if [ "$route" = shared ]; then
        exe=$tmp/pairs-dynamic
        pre=$(r_shared "$a")
        [ "$c" = hs ] && pre="$lib $pre"
        set -- "$@" "LD_PRELOAD=$pre"
    elif [ "$c" = hs ]; then
        set -- "$@" "LD_PRELOAD=$lib"
    fi
    [ "$c" = hs ] && set -- "$@" HEAPSIFT_RATE=1099511627776
    "$@" valgrind --tool=callgrind --toggle-collect=run_pairs --smc-check=all \
        --compress-strings=no --compress-pos=no --callgrind-out-file="$tmp/cg.out" \
        "$exe" "$k" 64 >/dev/null 2>"$tmp/cg.err" ||
        { echo "reach: callgrind failed:" >&2; tail -n 5 "$tmp/cg.err" >&2; exit 1; }
    if [ "$c" = hs ] && [ "$route" = static ] &&
        { ! grep -q '^heapsift: reach: hooked in place' "$tmp/cg.err" || grep -q bypass "$tmp/cg.err"; }
    then
        echo "reach: pairs-$a under callgrind: not hooked in place:" >&2
        grep reach "$tmp/cg.err" >&2 || true
        exit 1
    fi
    if [ "$route" = shared ] && grep -q 'reach:' "$tmp/cg.err"; then
        echo "reach: pairs-dynamic on $a: a reach line where interposition should do:" >&2
        grep reach "$tmp/cg.err" >&2
        exit 1
    fi
    # Exclusive cost per object and function. Cost lines are "LINE IR"; a "calls=" line's
    # next line is the call's inclusive cost, not this function's.
    awk -v a="$a" -v route="$route" -v c="$c" -v k="$k" '
        /^ob=/ { ob = substr($0, 4); sub(".*/", "", ob); next }
        /^fn=/ { fn = substr($0, 4); next }
        /^calls=/ { skip = 1; next }
        /^[0-9]/ { if (skip) { skip = 0; next } ir[ob ":" fn] += $2 }
        /^summary:/ { total = $2 }
        END {
            for (f in ir) {
                if (f ~ /^libheapsift[^:]*:hs_thunk_/) th += ir[f]
                else if (f ~ /^libheapsift/) hk += ir[f]
                else out += ir[f]
                if (ir[f] >= k / 20) printf "%s %s %s %s %d %s\n", a, route, c, k, ir[f], f >>"'"$tmp/cgf"'"
            }
            printf "%s %s %s %s %d %d %d %d\n", a, route, c, k, total, hk, th, out
        }' "$tmp/cg.out" >>"$tmp/cg"
    rm -f "$tmp/cg.out" "$tmp"/cg.*.pb.gz
}
: >"$tmp/cg"
: >"$tmp/cgf"
pn2=$((pn * 2))
echo "reach: callgrind, $pn and $pn2 malloc(64)+free pairs, static and shared, $allocs" >&2
for a in $allocs; do
    for route in static shared; do
        for c in plain hs; do
            for k in $pn $pn2; do cg_run "$a" "$route" "$c" "$k"; done
        done
    done
done

# Part 3. ir_run ALLOC ROUTE CONFIG WORKLOAD: one callgrind run of the whole workload;
# appends "workload alloc route config total loop" to $tmp/ir.
ir_run() {
    a=$1 route=$2 c=$3 w=$4
    case $w in
    churn) set -- 2 "$ir_ops" ;;
    cppmap) set -- "$ir_cm" 100000 ;;
    esac
    exe=$tmp/$w-$a pre=""
    if [ "$route" = shared ]; then
        exe=$tmp/$w-dynamic pre=$(r_shared "$a")
    fi
    [ "$c" = hs ] && pre="$lib${pre:+ $pre}"
    env ${pre:+"LD_PRELOAD=$pre"} "HEAPSIFT_OUT=$tmp/ir.%p.pb.gz" HEAPSIFT_SEED=1 \
        valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$tmp/ir.out" \
        "$exe" "$@" >/dev/null 2>"$tmp/ir.err" ||
        { echo "reach: callgrind failed ($w-$a):" >&2; tail -n 5 "$tmp/ir.err" >&2; exit 1; }
    if [ "$c" = hs ] && [ "$route" = static ] &&
        { ! grep -q '^heapsift: reach: hooked in place' "$tmp/ir.err" || grep -q bypass "$tmp/ir.err"; }
    then
        echo "reach: $w-$a under callgrind: not hooked in place:" >&2
        grep reach "$tmp/ir.err" >&2 || true
        exit 1
    fi
    # The loop's inclusive cost ("12,345 (1.2%)  file:func [obj]"; the "(pct)" may hold a
    # space, so match on the function).
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/ir.out" 2>/dev/null | awk \
        -v w="$w" -v a="$a" -v route="$route" -v c="$c" \
        -v total="$(sed -n 's/^summary: //p' "$tmp/ir.out")" '
        function num(s) { gsub(",", "", s); return s + 0 }
        $0 ~ /:worker_main \[/ && !loop { loop = num($1) }
        $0 ~ /run\(unsigned long, unsigned long\) \[/ && !loop { loop = num($1) }
        END { print w, a, route, c, total, loop + 0 }' >>"$tmp/ir"
    rm -f "$tmp/ir.out" "$tmp"/ir.*.pb.gz
}
: >"$tmp/ir"
echo "reach: callgrind, churn 2 x $ir_ops and cppmap $ir_cm, static and shared, $allocs" >&2
for w in churn cppmap; do
    for a in $allocs; do
        for route in static shared; do
            for c in plain hs; do ir_run "$a" "$route" "$c" "$w"; done
        done
    done
done

# The report.
{
    if [ "$part" -eq 0 ]; then
        echo
        echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): in-place hooks on statically linked allocators (bench/reach.sh$([ "$quick" -eq 1 ] && echo ', quick: figures not meaningful'))"
        echo
        bench_machine "$loadavg" "$lib"
        libtime=$(stat -c %Y "$lib")
        echo "- library built $(date -u -d "@$libtime" '+%Y-%m-%d %H:%M UTC'), HEAD then:" \
            "$(git -C "$top" log -1 --format=%h --before="@$libtime" 2>/dev/null || echo unknown);" \
            "library source files modified since the build:" \
            "$(cd "$top" && find src include CMakeLists.txt -type f -newer "$lib" 2>/dev/null | wc -l)"
        echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    else
        echo
        echo "### In-place hooks on statically linked allocators (bench/reach.sh)"
        echo
    fi
    echo "- allocators: gperftools $(dpkg-query -W -f='${Version}' libgoogle-perftools-dev 2>/dev/null || echo '?')" \
        "(libtcmalloc.a, libtcmalloc_minimal.a), jemalloc $(dpkg-query -W -f='${Version}' libjemalloc-dev 2>/dev/null || echo '?')" \
        "(libjemalloc_pic.a), linked into the executables; $(valgrind --version 2>/dev/null || echo 'no valgrind')"
    echo "- workloads: \`churn 2 $ops\`, \`cppmap $cm_ops 100000\`; $rounds rounds, configurations interleaved and rotated;" \
        "time-out $timeout_s s per run (a configuration that times out is not run again on that workload)"
    [ -z "$notes" ] || printf "%b" "$notes"
    echo
    echo "### Static allocators under heapsift's in-place hooks: overhead per workload"
    echo
    echo "Wall ratio: whole-process wall time over the same round's time of the same static" \
        "program with no profiler (median over rounds, and range); throughput: the program's" \
        "own ops/s, none's over this one's; CPU time: user + system (GNU time); max RSS: GNU" \
        "time's. hs-default: LD_PRELOAD=libheapsift.so, default rate (524288), at-exit" \
        "profile, counted only when heapsift said \"reach: hooked in place\" and its profile" \
        "holds the workload's allocation site. tc-sample: TCMALLOC_SAMPLE_PARAMETER=524288" \
        "(tcmalloc's sampler; it writes nothing). gperf-heap: HEAPPROFILE (every allocation" \
        "recorded, not sampled; .heap files every 1 GiB allocated and at exit). jemalloc-prof:" \
        "MALLOC_CONF=prof:true,lg_prof_sample:19,prof_final:true (sampled at 512 KiB, profile" \
        "written at exit)."
    for w in churn cppmap; do
        echo
        echo "#### $([ $w = churn ] && echo "churn: 2 threads x $ops, mixed small sizes through 10..30-frame stacks" ||
            echo "cppmap: $cm_ops operations on std::map<std::string, record>")"
        echo
        reach_table "$w"
    done
    echo
    echo "### Non-sampled malloc(64)+free through the hooks: instructions per pair (callgrind)"
    echo
    echo "\`pairs N 64\` and \`pairs 2N 64\` (N = $pn) under \`valgrind --tool=callgrind" \
        "--toggle-collect=run_pairs --smc-check=all\`, no profiler and heapsift at" \
        "HEAPSIFT_RATE=2^40 (nothing sampled). static: the allocator linked into the" \
        "executable, heapsift through its in-place hooks; shared: a dynamic executable with" \
        "the allocator's shared library preloaded behind heapsift (interposition). Extra per" \
        "pair: ((hs(2N) - hs(N)) - (plain(2N) - plain(N))) / N; direct: (hs(N) - plain(N)) / N." \
        "The three parts are 2N - N per pair too: heapsift's malloc and free, the thunks" \
        "(hs_thunk_*), and the Ir outside libheapsift.so over the plain run's (the patched" \
        "entry's jmp, the stub's jmp, the trampoline's endbr64 and its jump back)."
    echo
    awk -v n="$pn" -v n2="$pn2" '
    { t[$1, $2, $3, $4] = $5; h[$1, $2, $3, $4] = $6; th[$1, $2, $3, $4] = $7; o[$1, $2, $3, $4] = $8
      if (!($1 in seen)) { seen[$1] = 1; as[++na] = $1 } }
    function d(arr, a, r, c) { return (arr[a, r, c, n2] - arr[a, r, c, n]) / n }
    END {
        print "| allocator | route | Ir per pair, no profiler | Ir per pair, heapsift | extra per pair (2N - N) | direct | heapsift malloc+free | thunks | outside heapsift, over no profiler |"
        print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
        for (i = 1; i <= na; i++) {
            a = as[i]
            for (j = 1; j <= 2; j++) {
                r = j == 1 ? "static" : "shared"
                ex[a, r] = d(t, a, r, "hs") - d(t, a, r, "plain")
                printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", a,
                    (r == "static" ? "static, in-place hooks" : "shared, interposition"),
                    d(t, a, r, "plain"), d(t, a, r, "hs"), ex[a, r],
                    (t[a, r, "hs", n] - t[a, r, "plain", n]) / n, d(h, a, r, "hs"), d(th, a, r, "hs"),
                    d(o, a, r, "hs") - d(o, a, r, "plain")
            }
        }
        print ""
        print "| allocator | extra per pair, interposition | extra per pair, in-place hooks | the hooks over interposition |"
        print "| --- | --- | --- | --- |"
        for (i = 1; i <= na; i++) {
            a = as[i]
            printf "| %s | %.2f | %.2f | %+.2f |\n", a, ex[a, "shared"], ex[a, "static"], ex[a, "static"] - ex[a, "shared"]
        }
    }' "$tmp/cg"
    echo
    echo "Where the hooked pair's instructions go, per function (callgrind's exclusive Ir," \
        "2N - N, per pair; functions above 0.05 per pair). Callgrind names a function by" \
        "where a call lands: the trampolines (in an anonymous page, \`???\`) carry the" \
        "relocated prologue and, since they jump back into it, the allocator's body; the" \
        "patched entry's jmp and the stub's are counted under the entry's name in \`???\`," \
        "and a body re-entered that way shows as \`malloc'2\`. tcmalloc's malloc and free" \
        "live in an ELF section of their own (google_malloc), which callgrind places in no" \
        "object (\`???\`) even without heapsift."
    for a in $allocs; do
        echo
        echo "#### pairs-$a, static"
        echo
        echo "| object:function | no profiler | heapsift |"
        echo "| --- | --- | --- |"
        awk -v a="$a" -v n="$pn" -v n2="$pn2" '
        $1 == a && $2 == "static" {
            f = $6; for (i = 7; i <= NF; i++) f = f " " $i
            gsub(/\|/, "\\|", f)
            v[f, $3, $4] = $5; fs[f] = 1
        }
        END {
            for (f in fs) {
                p = (v[f, "plain", n2] - v[f, "plain", n]) / n
                q = (v[f, "hs", n2] - v[f, "hs", n]) / n
                if (p >= 0.05 || q >= 0.05) printf "| `%s` | %.2f | %.2f |\n", f, p, q
            }
        }' "$tmp/cgf" | sort -t'|' -k4,4nr
    done
    echo
    echo "### The workloads' instructions, no profiler against heapsift (callgrind)"
    echo
    echo "\`churn 2 $ir_ops\` and \`cppmap $ir_cm 100000\` under \`valgrind --tool=callgrind" \
        "--smc-check=all\`, heapsift at the default rate (HEAPSIFT_SEED=1): the whole process" \
        "(start-up and the exit profile included) and the loop alone (worker_main, run;" \
        "inclusive). static: the in-place hooks; shared: the same program dynamically" \
        "linked, the allocator's shared library preloaded (behind heapsift: interposition)." \
        "Load-independent."
    echo
    echo "| workload | allocator | route | Ir, no profiler | Ir, heapsift | ratio | loop ratio | extra Ir per operation (loop) |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    awk -v ops="$ir_ops" -v cm="$ir_cm" '
    { t[$1, $2, $3, $4] = $5; l[$1, $2, $3, $4] = $6
      k = $1 SUBSEP $2 SUBSEP $3; if (!(k in seen)) { seen[k] = 1; ks[++nk] = k } }
    END {
        for (i = 1; i <= nk; i++) {
            split(ks[i], f, SUBSEP); w = f[1]; a = f[2]; r = f[3]
            n = w == "churn" ? 2 * ops : cm
            printf "| %s | %s | %s | %.0f | %.0f | %.3f | %.3f | %.1f |\n", w, a,
                (r == "static" ? "static, in-place hooks" : "shared, interposition"),
                t[w, a, r, "plain"], t[w, a, r, "hs"], t[w, a, r, "hs"] / t[w, a, r, "plain"],
                l[w, a, r, "hs"] / l[w, a, r, "plain"], (l[w, a, r, "hs"] - l[w, a, r, "plain"]) / n
        }
    }' "$tmp/ir"
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"
