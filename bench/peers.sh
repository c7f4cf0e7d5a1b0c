# bench/peers.sh: the peer comparison, sourced by bench/run.sh (which sets build, lib, bin,
# tmp, report, rounds, threads, timeout_s, ht_rounds, quick, workloads, tcmalloc, jemalloc
# and awk_lib); defines peers_main and nothing runs on sourcing. POSIX sh.
#
# Every workload runs under every configuration once per round, the configuration order
# rotated by one place per round, so a slow spell of the shared machine spreads over all
# of them. Each run is timed from outside (date +%s.%N around the whole process: start,
# work, exit, at-exit profile writes included) under GNU time for the max RSS (%M: the
# largest resident set of the process tree; for heaptrack, of its largest process) and
# under `timeout`: a run that exceeds TIMEOUT is killed and reported as "timeout", and the
# configuration is not tried again on that workload. heaptrack runs in the first
# HEAPTRACK_ROUNDS rounds only. Ratios are taken within a round, then their median over
# rounds: the wall ratio against no profiler, and against the configuration's own
# allocator (gperftools' heap profiler against tcmalloc alone, jemalloc's profiler and
# heapsift-on-jemalloc against jemalloc alone; glibc's malloc for the rest); the
# throughput ratio is the same against the program's own figure (ops/s, queries/s), and
# the CPU time ratio against the user + system time GNU time reports (what a busy shared
# machine disturbs less than wall time; not a target, a cross-check). The
# profiler's memory is the median over rounds of (max RSS - its own allocator's max RSS
# in the same round); heapsift's profile comments add its live samples and stacks at exit.
# Each run's stdout, less its timing lines, must equal the no-profiler run's (heaptrack,
# which prints on stdout itself, is not checked): a profiler must not change the program.

# name:base: the configurations, and the one each is measured against ("own allocator").
peer_configs_all="none:none hs-hooks:none hs-default:none hs-64k:none hs-4k:none \
hs-every:none tcmalloc:none gperf-heap:tcmalloc jemalloc:none jemalloc-prof:jemalloc \
hs-on-jemalloc:jemalloc heaptrack:none"

# Sets wl_cmd (program and arguments, no spaces inside one) and wl_in (its stdin).
peer_workload() {
    wl_in=/dev/null
    q=$quick
    case "$1" in
    churn) wl_cmd="$bin/churn $threads ${OPS:-$([ "$q" -eq 1 ] && echo 400000 || echo 16000000)}" ;;
    lru) wl_cmd="$bin/lru_cache $([ "$q" -eq 1 ] && echo 25000 || echo 250000) 4000" ;;
    bigalloc) wl_cmd="$bin/bigalloc 1 $([ "$q" -eq 1 ] && echo 1500 || echo 15000)" ;;
    cppmap) wl_cmd="$bin/cppmap $([ "$q" -eq 1 ] && echo 40000 || echo 400000) 100000" ;;
    sqlite)
        wl_cmd="sqlite3 :memory:"
        wl_in=$tmp/sqlite.sql
        ;;
    *)
        echo "bench: unknown workload $1 (churn lru bigalloc cppmap sqlite)" >&2
        exit 1
        ;;
    esac
}

peer_describe() {
    case "$1" in
    churn) echo "churn: $threads threads, mixed small sizes through 10..30-frame stacks" ;;
    lru) echo "lru: examples/lru_cache.c, a plan cache of 4000 entries, Zipf queries" ;;
    bigalloc) echo "bigalloc: realloc growth to 4 MiB, calloc, aligned blocks, 1 thread" ;;
    cppmap) echo "cppmap: std::map<std::string, record> with string values and maps" ;;
    sqlite) echo "sqlite: Debian's sqlite3 shell, $sqlite_rows-row transaction script" ;;
    esac
}

# Runs workload $1, round $2, configuration $3; appends one line to $peer_out ($tmp/peers
# unless set):
# "workload round config status wall_s maxrss_kib throughput live_samples stacks same cpu_s".
peer_run() {
    w=$1 r=$2 c=$3
    peer_workload "$w"
    set -- env
    case "$c" in
    hs-*) set -- "$@" "HEAPSIFT_OUT=$tmp/prof.%p.pb.gz" HEAPSIFT_SEED=1 ;;
    esac
    case "$c" in
    none) ;;
    hs-hooks) set -- "$@" "LD_PRELOAD=$lib" HEAPSIFT_RATE=0 ;;
    hs-default) set -- "$@" "LD_PRELOAD=$lib" ;;
    hs-64k) set -- "$@" "LD_PRELOAD=$lib" HEAPSIFT_RATE=65536 ;;
    hs-4k) set -- "$@" "LD_PRELOAD=$lib" HEAPSIFT_RATE=4096 ;;
    hs-every) set -- "$@" "LD_PRELOAD=$lib" HEAPSIFT_RATE=1 ;;
    tcmalloc) set -- "$@" "LD_PRELOAD=$tcmalloc" ;;
    gperf-heap) set -- "$@" "LD_PRELOAD=$tcmalloc" "HEAPPROFILE=$tmp/gperf" ;;
    jemalloc) set -- "$@" "LD_PRELOAD=$jemalloc" ;;
    jemalloc-prof) set -- "$@" "LD_PRELOAD=$jemalloc" MALLOC_CONF=prof:true,lg_prof_sample:19 ;;
    hs-on-jemalloc) set -- "$@" "LD_PRELOAD=$lib $jemalloc" ;;
    trampoline) set -- "$@" "LD_PRELOAD=$bin/libtrampoline.so" ;;
    tramp-on-jemalloc) set -- "$@" "LD_PRELOAD=$bin/libtrampoline.so $jemalloc" ;;
    heaptrack) set -- "$@" heaptrack -o "$tmp/heaptrack" ;;
    *) echo "bench: unknown configuration $c" >&2; exit 1 ;;
    esac
    # shellcheck disable=SC2086 # wl_cmd is split on purpose
    set -- "$@" $wl_cmd
    rm -f "$tmp/rss"
    t0=$(date +%s.%N)
    status=0
    timeout -k 5 "$timeout_s" /usr/bin/time -f "%M %U %S" -o "$tmp/rss" "$@" <"$wl_in" \
        >"$tmp/out" 2>"$tmp/err" || status=$?
    t1=$(date +%s.%N)
    set -- $(tail -n 1 "$tmp/rss" 2>/dev/null || true)
    rss=${1:-0} cpu=$(awk -v u="${2:-0}" -v s="${3:-0}" 'BEGIN { printf "%.2f", u + s }')
    case "$rss" in '' | *[!0-9]*) rss=0 ;; esac
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        st=timeout
    elif [ "$status" -ne 0 ]; then
        st=fail
        echo "bench: warning: $w under $c exited with status $status:" >&2
        tail -n 5 "$tmp/err" >&2
    else
        st=ok
    fi
    tput=$(sed -n 's/^[a-z]*\/s: //p' "$tmp/out" | head -n 1)
    samples=- stacks=-
    prof=$(ls -t "$tmp"/prof.*.pb.gz 2>/dev/null | head -n 1 || true)
    if [ -n "$prof" ]; then
        # The comments are plain strings in the profile's string table.
        samples=$(gzip -dc "$prof" | grep -ao 'live samples=[0-9]*' | head -n 1 | cut -d= -f2)
        stacks=$(gzip -dc "$prof" | grep -ao ' stacks=[0-9]*' | head -n 1 | cut -d= -f2)
    elif [ "$st" = ok ] && case "$c" in hs-hooks) false ;; hs-*) true ;; *) false ;; esac then
        echo "bench: warning: $w under $c wrote no profile" >&2
    fi
    # Same output as without a profiler? (timing lines excepted; heaptrack not checked)
    grep -v -e '^wall:' -e '^[a-z]*/s:' "$tmp/out" >"$tmp/out.cmp" || true
    same=-
    if [ "$c" = none ] && [ "$st" = ok ] && [ ! -f "$tmp/ref.$w" ]; then
        cp "$tmp/out.cmp" "$tmp/ref.$w"
    fi
    if [ "$st" = ok ] && [ "$c" != heaptrack ] && [ -f "$tmp/ref.$w" ]; then
        if cmp -s "$tmp/out.cmp" "$tmp/ref.$w"; then same=yes; else same=NO; fi
    fi
    echo "$w $r $c $st $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" \
        "$rss ${tput:--} ${samples:--} ${stacks:--} $same $cpu" >>"${peer_out:-$tmp/peers}"
    [ "$st" = timeout ] && echo "$w $c" >>"$tmp/timed_out"
    rm -f "$tmp"/prof.*.pb.gz "$tmp"/gperf.* "$tmp"/heaptrack.* "$tmp/rss"
    return 0
}

# The Markdown table of workload $1 from $tmp/peers.
peer_table() {
    awk -v w="$1" -v configs="$peer_configs" -v tmo="$timeout_s" "$awk_lib"'
$1 == w {
    st[$2, $3] = $4; wall[$2, $3] = $5; rss[$2, $3] = $6; tp[$2, $3] = $7
    smp[$2, $3] = $8; stk[$2, $3] = $9; same[$2, $3] = $10; cpu[$2, $3] = $11; rounds[$2] = 1
}
function ok(r, c) { return st[r, c] == "ok" }
function f3(x) { return x == "" ? "-" : sprintf("%.3f", x) }
END {
    print "| configuration | runs | wall ratio vs none (median) | range | vs own allocator | throughput ratio vs own allocator | CPU time ratio vs own allocator | median wall (s) | median max RSS (MiB) | RSS over own allocator (MiB) | live samples / stacks at exit | same output |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    nc = split(configs, cs, " ")
    for (i = 1; i <= nc; i++) {
        split(cs[i], kv, ":"); c = kv[1]; b = kv[2]
        rv = ""; rb = ""; tr = ""; wl = ""; rs = ""; dm = ""; sm = ""; sk = ""; cr = ""
        nok = 0; ntmo = 0; nfail = 0; diff = 0; nrun = 0
        for (r in rounds) {
            if (!((r, c) in st)) continue
            nrun++
            if (st[r, c] == "timeout") { ntmo++; continue }
            if (!ok(r, c)) { nfail++; continue }
            nok++
            if (same[r, c] == "NO") diff++
            wl = wl " " wall[r, c]; rs = rs " " rss[r, c] / 1024
            if (ok(r, "none")) rv = rv " " wall[r, c] / wall[r, "none"]
            if (ok(r, b)) {
                rb = rb " " wall[r, c] / wall[r, b]
                dm = dm " " (rss[r, c] - rss[r, b]) / 1024
                if (cpu[r, b] > 0) cr = cr " " cpu[r, c] / cpu[r, b]
                if (tp[r, c] != "-" && tp[r, c] > 0 && tp[r, b] != "-")
                    tr = tr " " tp[r, b] / tp[r, c]
            }
            if (smp[r, c] != "-") { sm = sm " " smp[r, c]; sk = sk " " stk[r, c] }
        }
        if (nrun == 0) continue
        runs = nok "/" nrun
        if (ntmo) runs = runs ", " ntmo " timeout"
        if (nfail) runs = runs ", " nfail " failed"
        if (nok == 0) {
            tag = ntmo ? "timeout (> " tmo " s)" : "failed"
            printf "| %s | %s | %s | - | - | - | - | - | - | - | - | - |\n", c, runs, tag
            continue
        }
        printf "| %s | %s | %s | %s..%s | %s | %s | %s | %s | %.1f | %s | %s | %s |\n", c, runs,
            f3(median(rv)), f3(extreme(rv, 0)), f3(extreme(rv, 1)),
            (b == "none" ? "(same)" : f3(median(rb)) " vs " b), f3(median(tr)), f3(median(cr)),
            f3(median(wl)), median(rs),
            (c == "none" ? "-" : sprintf("%+.1f", median(dm))),
            (sm == "" ? "-" : median(sm) " / " median(sk)),
            (c == "heaptrack" ? "not checked" : (diff ? "NO (" diff ")" : "yes"))
    }
}' "$tmp/peers"
}

# Writes $tmp/sqlite.sql when sqlite is among the workloads and it is not there yet.
peer_sqlite_script() {
    sqlite_rows=$([ "$quick" -eq 1 ] && echo 6000 || echo 60000)
    case " $workloads " in
    *" sqlite "*)
        [ -s "$tmp/sqlite.sql" ] ||
            awk -v rows="$sqlite_rows" -f "$here/gen_sql.awk" >"$tmp/sqlite.sql"
        ;;
    esac
}

peers_main() {
    peer_configs=""
    for kv in $peer_configs_all; do
        if [ -z "${CONFIGS:-}" ] || echo " $CONFIGS " | grep -q " ${kv%%:*} "; then
            peer_configs="$peer_configs $kv"
        fi
    done
    n=$(echo $peer_configs | wc -w)
    peer_sqlite_script
    : >"$tmp/peers"
    : >"$tmp/timed_out"
    echo "heapsift bench, peers: $rounds rounds of [$workloads] x $n configurations," \
        "time-out $timeout_s s, heaptrack in $ht_rounds rounds" >&2
    r=0
    while [ "$r" -lt "$rounds" ]; do
        order=$(echo $peer_configs | tr ' ' '\n' | awk -v k="$r" -v n="$n" \
            '{ line[NR - 1] = $0 } END { for (i = 0; i < n; i++) print line[(i + k) % n] }')
        for w in $workloads; do
            printf "  round %d/%d %s:" $((r + 1)) "$rounds" "$w" >&2
            for kv in $order; do
                c=${kv%%:*}
                [ "$c" = heaptrack ] && [ "$r" -ge "$ht_rounds" ] && continue
                grep -qx "$w $c" "$tmp/timed_out" && continue
                printf " %s" "$c" >&2
                peer_run "$w" "$r" "$c"
            done
            echo >&2
        done
        r=$((r + 1))
    done
    {
        echo
        echo "### Peers: overhead per workload"
        echo
        echo "Wall ratio: whole-process wall time over the same round's no-profiler time" \
            "(median over rounds, and range). Own allocator: jemalloc for jemalloc-prof and" \
            "hs-on-jemalloc, tcmalloc for gperf-heap, glibc otherwise. Throughput: the" \
            "program's own ops/s or queries/s, own allocator's over this one's. CPU time:" \
            "user + system of the process tree (GNU time), less sensitive than wall time" \
            "to other load on the machine. Memory:" \
            "GNU time's max RSS; heapsift's live samples and stacks from its at-exit" \
            "profile. hs-default/64k/4k/every: HEAPSIFT_RATE unset (524288)/65536/4096/1;" \
            "hs-hooks: HEAPSIFT_RATE=0; gperf-heap: HEAPPROFILE with libtcmalloc.so.4;" \
            "jemalloc-prof: MALLOC_CONF=prof:true,lg_prof_sample:19; heaptrack: heaptrack -o."
        for w in $workloads; do
            echo
            echo "#### $(peer_describe "$w")"
            echo
            peer_table "$w"
        done
    } >>"$report"
}
