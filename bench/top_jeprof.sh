#!/bin/sh
# bench/top_jeprof.sh: `heapsift top FILE` against `jeprof --text PROG FILE` on two
# jemalloc heap_v2 files (issue 43's goal: heapsift at least 100 times faster on both).
#  1. builds bench/top_jeprof.c and runs it under Debian's libjemalloc2 with
#     MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 (every allocation sampled, so
#     the stacks do not depend on luck; ASLR off through setarch -R when it works):
#     `small` (about 7 KB, a dozen stacks) and `paths 70000 35006` (35,006 16-frame paths
#     plus jemalloc's own start-up stacks: about 35,008 stacks, 14 MB);
#  2. for each file, ROUNDS (5) interleaved rounds of: jeprof, heapsift top, and the floors
#     `heapsift --version` (exec and dynamic loading of the CLI) and /bin/true; each
#     command's median wall time and median CPU time (perf stat's task-clock, children
#     included: jeprof's addr2line and nm too), output to /dev/null. On a shared machine
#     the CPU times are the steadier ratio;
#  3. checks that jeprof's and heapsift's totals agree, and prints a Markdown section;
#     with --record appends it to bench/history/YYYY-MM-DD.md.
# Usage: sh bench/top_jeprof.sh BUILD_DIR [--record]. Variables: ROUNDS (5), KEEP=DIR
# (keep the two profiles and the program there), BEFORE=PATH (another heapsift binary,
# timed in the same rounds: an older build's).
set -eu
build=$(cd "${1:?usage: top_jeprof.sh BUILD_DIR [--record]}" && pwd)
record=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
ROUNDS=${ROUNDS:-5}
hs=$build/heapsift
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -x "$hs" ] || { echo "build heapsift first ($hs)" >&2; exit 1; }
perf stat -e task-clock -o /dev/null true 2>/dev/null || { echo "needs perf stat (task-clock)" >&2; exit 1; }
[ -n "$je" ] && command -v jeprof >/dev/null 2>&1 ||
    { echo "needs libjemalloc2 and jeprof (libjemalloc-dev)" >&2; exit 1; }
if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    tmp=$(cd "$KEEP" && pwd)
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT INT TERM
fi
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"

cc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" "$here/top_jeprof.c"
profile() { # name args...: runs the program, prints the heap file's path
    name=$1
    shift
    rm -f "$tmp/$name".*.heap
    MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$tmp/$name" \
        LD_PRELOAD=$je $norand "$tmp/prog" "$@"
    ls "$tmp/$name".*.heap | head -n 1
}
small=$(profile small small)
big=$(profile big paths 70000 35006)

run1() { # label command...: one run under perf stat: its wall time (perf's "time elapsed",
    # from its fork to its wait: perf's own start is not in it) in ns appended to
    # $tmp/t.label, its CPU time (task-clock, children included) in ms to $tmp/c.label
    label=$1
    shift
    LC_ALL=C perf stat -e task-clock -o "$tmp/cpu" -- "$@" >/dev/null 2>&1 || echo "bench: $* failed" >&2
    awk '$4 == "elapsed" {gsub(/,/, "", $1); printf "%.0f\n", $1 * 1e9}' "$tmp/cpu" >>"$tmp/t.$label"
    awk '$2 == "msec" && $3 == "task-clock" {gsub(/,/, "", $1); print $1}' "$tmp/cpu" >>"$tmp/c.$label"
}
median() { sort -n "$tmp/t.$1" | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)] / 1e6}'; }
median_cpu() { sort -n "$tmp/c.$1" | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)]}'; }

for f in small big; do
    for k in je hs ver true before; do
        : >"$tmp/t.$f.$k"
        : >"$tmp/c.$f.$k"
    done
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ $r -lt "$ROUNDS" ]; do
    for f in small big; do
        eval "file=\$$f"
        run1 "$f.je" jeprof --text "$tmp/prog" "$file"
        run1 "$f.hs" "$hs" top "$file"
        [ -z "${BEFORE:-}" ] || run1 "$f.before" "$BEFORE" top "$file"
        run1 "$f.ver" "$hs" --version
        run1 "$f.true" /bin/true
    done
    r=$((r + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

total_je() { jeprof --text --show_bytes "$tmp/prog" "$1" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B/\1/p'; }
total_hs() { "$hs" top --unit B "$1" | sed -n 's/.* of \([0-9]*\)B total$/\1/p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }

section() {
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    echo
    echo "## top_jeprof: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs, $cpu; load average before: $load, after: $load_after"
    echo "- heapsift commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- workload: \`bench/top_jeprof.sh\`, medians of $ROUNDS interleaved rounds (each round:" \
        "jeprof, heapsift top, heapsift --version, /bin/true on the small file, then on the large)"
    for f in small big; do
        eval "file=\$$f"
        echo "- $f: $(wc -c <"$file") bytes, $(grep -c '^@' "$file") stacks; totals (inuse_space):" \
            "jeprof $(total_je "$file") B, heapsift $(total_hs "$file") B"
    done
    echo
    echo "Wall time, median ms:"
    echo
    echo "| file | jeprof --text | heapsift top | jeprof / top | heapsift --version | /bin/true | jeprof / --version |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for f in small big; do
        j=$(median "$f.je") h=$(median "$f.hs") v=$(median "$f.ver") t=$(median "$f.true")
        echo "| $f | $j | $h | $(ratio "$j" "$h") | $v | $t | $(ratio "$j" "$v") |"
    done
    echo
    echo "CPU time (perf stat task-clock, children included), median ms:"
    echo
    echo "| file | jeprof --text | heapsift top | jeprof / top | heapsift --version |"
    echo "| --- | --- | --- | --- | --- |"
    for f in small big; do
        j=$(median_cpu "$f.je") h=$(median_cpu "$f.hs") v=$(median_cpu "$f.ver")
        echo "| $f | $j | $h | $(ratio "$j" "$h") | $v |"
    done
    if [ -n "${BEFORE:-}" ]; then
        echo
        echo "BEFORE=$BEFORE, \`heapsift top\` in the same rounds (wall and CPU, median ms):"
        echo
        echo "| file | wall | jeprof / it (wall) | CPU | jeprof / it (CPU) |"
        echo "| --- | --- | --- | --- | --- |"
        for f in small big; do
            j=$(median "$f.je") b=$(median "$f.before") jc=$(median_cpu "$f.je") bc=$(median_cpu "$f.before")
            echo "| $f | $b | $(ratio "$j" "$b") | $bc | $(ratio "$jc" "$bc") |"
        done
    fi
}
section | tee "$tmp/section.md"
if [ "$record" = --record ]; then
    # shellcheck source=bench/record.sh
    . "$src/bench/record.sh"
    bench_record "$src/bench" "$tmp/section.md"
fi
