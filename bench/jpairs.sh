# bench/jpairs.sh: heapsift against jemalloc's profiler in palindromic rounds, sourced by
# bench/run.sh after peers.sh (whose peer_run it uses); defines jpairs_main and nothing
# runs on sourcing. POSIX sh.
#
# The peers part rotates the order of twelve configurations, so a configuration and the
# allocator it is measured against can run a minute apart on a shared machine, and a
# difference of 1% between two profilers is inside its noise. Here every workload runs,
# PAIR_ROUNDS (9) times, the seven configurations the comparison needs in a palindrome:
# none, hs-default, trampoline, jemalloc, jemalloc-prof, hs-on-jemalloc,
# tramp-on-jemalloc, then the same backwards (the reverse order in even rounds). Each
# configuration's two runs are symmetric about the middle of the round, so a linear drift
# of the machine's speed cancels from the sum of its two wall times. In each round:
#   heapsift        (hs-default sum) / (none sum)            its overhead on glibc
#   jemalloc-prof   (jemalloc-prof sum) / (jemalloc sum)     its overhead on jemalloc
#   hs-on-jemalloc  (hs-on-jemalloc sum) / (jemalloc sum)    heapsift on the same allocator
# and the two differences the target is about: heapsift - jemalloc-prof (each against its
# own allocator) and hs-on-jemalloc - jemalloc-prof (both on jemalloc). The target row is
# PASS when the median of both differences over the rounds is below zero; the rounds
# heapsift won are counted beside it.
#
# The trampolines (bench/trampoline.c: every entry point one jump to the next allocator,
# nothing counted, no profile) are the floor: the least any LD_PRELOAD profiler adds on
# glibc and on jemalloc. Where a trampoline minus jemalloc-prof is not below zero, no
# interposer could be below jemalloc's profiler on that workload, whatever it did.

jpairs_configs="none hs-default trampoline jemalloc jemalloc-prof hs-on-jemalloc tramp-on-jemalloc"

jpairs_run_round() {
    w=$1 r=$2
    fwd=$jpairs_configs
    bwd=$(echo $jpairs_configs | tr ' ' '\n' | awk '{ l[NR] = $0 } END { for (i = NR; i; i--) print l[i] }')
    if [ $((r % 2)) -eq 0 ]; then
        order="$bwd $fwd"
    else
        order="$fwd $bwd"
    fi
    for c in $order; do
        peer_run "$w" "$r" "$c"
    done
}

# The table, one row per workload, from $tmp/jp; and the target rows into $tmp/jp.rows.
jpairs_table() {
    awk -v configs="$jpairs_configs" "$awk_lib"'
    { if ($4 != "ok") bad[$1, $2] = 1; sum[$1, $2, $3] += $5; n[$1, $2, $3]++; w[$1] = 1; rs[$2] = 1 }
    function r3(x) { return sprintf("%.3f", x) }
    function span(l) { return sprintf("%+.3f..%+.3f", extreme(l, 0), extreme(l, 1)) }
    function whole(wl, r,   i, nc, cs) { # every configuration ran twice, all well
        if ((wl, r) in bad)
            return 0
        nc = split(configs, cs, " ")
        for (i = 1; i <= nc; i++)
            if (n[wl, r, cs[i]] != 2)
                return 0
        return 1
    }
    END {
        for (wl in w) {
            hs = jp = hj = tg = tj = d1 = d2 = d3 = d4 = ""; won1 = won2 = won3 = won4 = k = 0
            for (r in rs) {
                if (!whole(wl, r))
                    continue
                a = sum[wl, r, "hs-default"] / sum[wl, r, "none"]
                b = sum[wl, r, "jemalloc-prof"] / sum[wl, r, "jemalloc"]
                c = sum[wl, r, "hs-on-jemalloc"] / sum[wl, r, "jemalloc"]
                t = sum[wl, r, "trampoline"] / sum[wl, r, "none"]
                u = sum[wl, r, "tramp-on-jemalloc"] / sum[wl, r, "jemalloc"]
                hs = hs " " a; jp = jp " " b; hj = hj " " c; tg = tg " " t; tj = tj " " u
                d1 = d1 " " (a - b); d2 = d2 " " (c - b); d3 = d3 " " (u - b); d4 = d4 " " (t - b); k++
                won1 += a < b; won2 += c < b; won3 += u < b; won4 += t < b
            }
            if (k == 0) {
                printf "| %s | no complete round | | | | | | | | | |\n", wl
                printf "| %s: overhead below jemalloc-prof, palindromic rounds | no complete round | below 0 | - |\n", wl >> rows
                continue
            }
            m1 = median(d1); m2 = median(d2)
            printf "| %s | %d | %s | %s | %s | %+.3f (%s), %d of %d | %+.3f (%s), %d of %d | %s | %s | %+.3f (%s), %d of %d | %+.3f (%s), %d of %d |\n",
                wl, k, r3(median(hs)), r3(median(jp)), r3(median(hj)),
                m1, span(d1), won1, k, m2, span(d2), won2, k,
                r3(median(tg)), r3(median(tj)), median(d4), span(d4), won4, k,
                median(d3), span(d3), won3, k
            lost = (m1 < 0 ? "" : ", heapsift vs jemalloc-prof") (m2 < 0 ? "" : ", hs-on-jemalloc vs jemalloc-prof")
            printf "| %s: overhead below jemalloc-prof, palindromic rounds (median difference of wall ratios; heapsift / hs-on-jemalloc) | %+.3f / %+.3f | below 0 | %s |\n",
                wl, m1, m2, lost == "" ? "PASS" : "FAIL (" substr(lost, 3) "; a bare interposer: " sprintf("%+.3f on glibc, %+.3f on jemalloc", median(d4), median(d3)) ")" >> rows
        }
    }' rows="$tmp/jp.rows" "$tmp/jp"
}

jpairs_main() {
    pr=${PAIR_ROUNDS:-$([ "$quick" -eq 1 ] && echo 1 || echo 9)}
    peer_sqlite_script
    : >"$tmp/jp"
    : >"$tmp/jp.rows"
    peer_out=$tmp/jp # where peer_run appends
    echo "heapsift bench, targets: [$workloads] against jemalloc's profiler," \
        "$pr palindromic rounds of 14 runs" >&2
    for w in $workloads; do
        printf "  %s:" "$w" >&2
        r=1
        while [ "$r" -le "$pr" ]; do
            printf " %d" "$r" >&2
            jpairs_run_round "$w" "$r"
            r=$((r + 1))
        done
        echo >&2
    done
    unset peer_out
    {
        echo
        echo "### Against jemalloc's profiler in palindromic rounds ($pr rounds)"
        echo
        echo "Each round runs none, hs-default, trampoline, jemalloc, jemalloc-prof," \
            "hs-on-jemalloc, tramp-on-jemalloc and then the same backwards; a" \
            "configuration's figure is the sum of its two wall times. Ratios and" \
            "differences are medians over the rounds; the range and the rounds in which" \
            "heapsift's overhead was the lower follow each difference. The trampolines" \
            "(bench/trampoline.c: one jump per call to the next allocator, nothing counted," \
            "no profile) are the least any LD_PRELOAD interposer adds; where a" \
            "trampoline's difference with jemalloc-prof is not below zero, no interposer" \
            "beats jemalloc's profiler on that workload and allocator."
        echo
        echo "| workload | rounds | heapsift / none | jemalloc-prof / jemalloc | hs-on-jemalloc / jemalloc | heapsift - jemalloc-prof (range), rounds won | hs-on-jemalloc - jemalloc-prof (range), rounds won | trampoline / none | tramp-on-jemalloc / jemalloc | trampoline - jemalloc-prof (range), rounds below | tramp-on-jemalloc - jemalloc-prof (range), rounds below |"
        echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
        jpairs_table | sort
    } >>"$report"
}
