#!/bin/sh
# bench/logwrite.sh: what log.c's pin costs the program. bench/logwrite writes 200,000
# lines of 12 bytes to its stderr, a log file opened by the shell without O_APPEND
# (`2>log`), in interleaved rounds of three configurations: without heapsift (bare), under
# heapsift without a trigger thread (no pin: the program's writes take no offset lock),
# and with the trigger thread (HEAPSIFT_INTERVAL_SECONDS=3600: it keeps a reference to
# the log from its start, so every program write takes the file's offset lock). The table:
# the median over rounds of each one's best loop (ns per write), its ratio to bare, and
# the pins the program saw (descriptor tables of heapsift's threads holding its log).
# usage: sh bench/logwrite.sh BUILD [--record]
# env: ROUNDS (9), N (200000), CC (gcc)
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
BENCH_NO_BEFORE=1 bench_args "sh bench/logwrite.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so
rounds=${ROUNDS:-9}
n=${N:-200000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-logwrite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
"${CC:-gcc}" -std=gnu11 -O2 -o "$tmp/logwrite" "$here/logwrite.c"
configs="bare nopin pin"

env_of() {
    case $1 in
    bare) echo "HS_BENCH=bare" ;;
    nopin) echo "LD_PRELOAD=$lib" ;;
    pin) echo "LD_PRELOAD=$lib HEAPSIFT_INTERVAL_SECONDS=3600" ;;
    esac
}

r=0
echo "logwrite: $rounds rounds x 3 configurations" >&2
while [ "$r" -lt "$rounds" ]; do
    for c in $configs; do
        # shellcheck disable=SC2046
        env $(env_of $c) HEAPSIFT_OUT="$tmp/p.%p.pb.gz" "$tmp/logwrite" "$n" 5 >"$tmp/out" \
            2>"$tmp/log" || { echo "logwrite: $c failed" >&2; exit 1; }
        echo "$c $(sed -n 's/^ns_per_write: //p' "$tmp/out") $(sed -n 's/^pins: //p' "$tmp/out")" \
            >>"$tmp/res"
        rm -f "$tmp"/p.*.pb.gz
    done
    r=$((r + 1))
done

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): a program's writes to its log (bench/logwrite.sh)"
    echo
    bench_machine "$loadavg" "$lib"
    echo "- workload: \`logwrite $n 5 2>log\` (best of 5 loops of $n 12-byte writes), $rounds" \
        "rounds, interleaved"
    echo
    echo "| configuration | ns per write (median) | vs bare | pins seen |"
    echo "| --- | --- | --- | --- |"
    awk -v configs="$configs" "$awk_lib"'
        { v[$1] = v[$1] " " $2; p[$1] = p[$1] " " $3 }
        END {
            b = median(v["bare"])
            k = split(configs, cs, " ")
            for (i = 1; i <= k; i++) {
                m = median(v[cs[i]])
                lo = extreme(p[cs[i]], 0); hi = extreme(p[cs[i]], 1)
                printf "| %s | %.1f | %s | %s |\n", cs[i], m,
                    cs[i] == "bare" ? "-" : sprintf("%.3fx", m / b), lo == hi ? lo : lo "-" hi
            }
        }' "$tmp/res"
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"
