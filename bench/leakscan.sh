#!/bin/sh
# bench/leakscan.sh: what a leak check costs a running process (issues 28 and 43): the
# pause of the program's threads (first stop signal to release) in each scan mode, and the
# scan's speed per GB of writable memory. The target is bench/attach_target.c under
# heapsift (HEAPSIFT_HTTP, a token): THREADS threads allocating as fast as they can beside
# HEAP_MB of live heap in 64 KiB blocks. One target per mode (MODES: "snapshot" =
# HEAPSIFT_LEAKS_SNAPSHOT=1, the threads paused for the stop and the fork only; "stop" =
# HEAPSIFT_LEAKS_SNAPSHOT=0, paused for the whole scan), run side by side but interleaved:
# the target not measured is held with SIGSTOP, so each round measures one mode alone on
# the machine, and rounds alternate the modes. Each round POSTs /debug/heapsift/leakcheck
# and reads the answer's comments ("reachability scan: ... MiB read (U MiB untouched, not
# read) in T ms (C ms of CPU);
# N other threads stopped in S ms, paused P ms" and "leak check: snapshot (fork), paused P
# ms (fork F ms)" or "leak check: stop-the-world, ..."). The last lines are the medians
# per mode. THP=1 runs the targets with glibc's malloc asking for transparent huge pages
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, for THP in "madvise" mode).
# usage: sh bench/leakscan.sh BUILD
# env: ROUNDS (5 per mode), THREADS (16), HEAP_MB (1024), RATE (524288), MODES, THP, SHOWC
# (1: each answer's two comment lines on stderr)
set -eu
build=$(cd "${1:?usage: sh bench/leakscan.sh BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/libheapsift.so
[ -e "$lib" ] || { echo "leakscan: no $lib (build first)" >&2; exit 1; }
command -v curl >/dev/null && command -v go >/dev/null || { echo "leakscan: needs curl and go" >&2; exit 1; }
rounds=${ROUNDS:-5} threads=${THREADS:-16} heap=${HEAP_MB:-1024} rate=${RATE:-524288}
modes=${MODES:-snapshot stop} tun=
[ "${THP:-0}" = 1 ] && tun=glibc.malloc.hugetlb=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-leakscan.XXXXXX")
pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
cc -O2 -pthread -o "$tmp/target" "$here/attach_target.c"
export GOCACHE="$tmp/gocache" PPROF_TMPDIR="$tmp/pprof"
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
for m in $modes; do
    snap=1
    [ "$m" = stop ] && snap=0
    env HEAPSIFT_RATE="$rate" HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$tmp/$m.port" \
        HEAPSIFT_HTTP_TOKEN=bench HEAPSIFT_OUT="$tmp/$m.exit.pb.gz" HEAPSIFT_LEAKS_SNAPSHOT=$snap \
        ${tun:+GLIBC_TUNABLES=$tun} LD_PRELOAD="$lib" \
        "$tmp/target" "$threads" "$heap" >"$tmp/$m.ready" 2>"$tmp/$m.err" &
    eval "pid_$m=$!"
    pids="$pids $!"
    i=0
    while ! { grep -q ready "$tmp/$m.ready" 2>/dev/null && [ -s "$tmp/$m.port" ]; }; do
        i=$((i + 1))
        [ "$i" -lt 1200 ] || { echo "leakscan: the $m target never got ready" >&2; exit 1; }
        sleep 0.1
    done
    kill -STOP "$!"
done
echo "| round | mode | MiB read | scan ms | scan CPU ms | GB/s (CPU) | threads stopped | stop ms | fork ms | pause ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
r=1
while [ "$r" -le "$rounds" ]; do
    for m in $modes; do
        eval "pid=\$pid_$m"
        kill -CONT "$pid"
        sleep 1 # its threads allocating again before the check
        url=http://127.0.0.1:$(cat "$tmp/$m.port")/debug/heapsift/leakcheck
        code=$(curl -sS -o "$tmp/p.pb.gz" -w '%{http_code}' --max-time 300 -X POST \
            -H 'Authorization: Bearer bench' "$url")
        kill -STOP "$pid"
        [ "$code" = 200 ] || { echo "leakscan: POST answered $code" >&2; exit 1; }
        go tool pprof -comments "$tmp/p.pb.gz" 2>/dev/null >"$tmp/c"
        [ -z "${SHOWC:-}" ] || grep -E "^(reachability|leak check)" "$tmp/c" >&2
        fork=$(sed -n 's/^leak check: snapshot (fork), paused [0-9.]* ms (fork \([0-9.]*\) ms).*/\1/p' "$tmp/c")
        grep '^reachability scan:' "$tmp/c" |
            sed -E 's/.* ([0-9.]+) MiB read (\([^)]*\) )?in ([0-9.]+) ms \(([0-9.]+) ms of CPU\); ([0-9]+) other threads stopped in ([0-9.]+) ms, paused ([0-9.]+) ms.*/\1 \3 \4 \5 \6 \7/' |
            awk -v r="$r" -v m="$m" -v f="${fork:--}" '{ printf "| %d | %s | %.0f | %.0f | %.0f | %.2f | %d | %.1f | %s | %.1f |\n", r, m, $1, $2, $3, $1 * 1.048576 / $3, $4, $5, f, $6 }' |
            tee -a "$tmp/rows"
    done
    r=$((r + 1))
done
echo
for m in $modes; do
    awk -v m="$m" -F ' *[|] *' '$3 == m { n++; p[n] = $11; s[n] = $9; k[n] = $5 }
        function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
                                      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        END { printf "- %s: median pause %.1f ms, median stop %.1f ms, median scan %.0f ms (%d rounds)\n", m, med(p, n), med(s, n), med(k, n), n }' "$tmp/rows"
done
echo "- target: bench/attach_target $threads $heap under heapsift (HEAPSIFT_RATE=$rate)${tun:+, GLIBC_TUNABLES=$tun}, $rounds leak checks per mode over HTTP, interleaved; load average at start $loadavg; $(nproc) CPUs"
