# bench/common.sh: what the bench scripts share: for the stand-alone ones (bigheap.sh,
# floor.sh, labels_cost.sh) their command line, BUILD [--before LIB] [--record], and the
# lines that open a report on the machine; for all of them, run.sh included, awk_lib, the
# awk functions median and extreme of a space-separated list. Sourced, not run.
# bench_args USAGE "$@": sets build (absolute), before (absolute, or empty) and record
# (0 or 1); anything else prints "usage: USAGE" and exits 1. With BENCH_NO_BEFORE=1 set,
# --before is refused too.
bench_usage() {
    echo "usage: $b_usage" >&2
    exit 1
}

bench_args() {
    b_usage=$1
    shift
    build="" before="" record=0
    while [ $# -gt 0 ]; do
        case $1 in
        --before)
            [ "${BENCH_NO_BEFORE:-0}" = 0 ] && [ $# -ge 2 ] || bench_usage
            before=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
            shift
            ;;
        --record) record=1 ;;
        -*) bench_usage ;;
        *)
            [ -z "$build" ] || bench_usage
            build=$(cd "$1" && pwd)
            ;;
        esac
        shift
    done
    [ -n "$build" ] || bench_usage
}

# bench_machine LOADAVG LIB: the report's lines on the machine, the kernel and its load
# before the run (LOADAVG), the commit and the library measured.
bench_machine() {
    echo "- machine: $(uname -m), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- kernel: $(uname -r); load average before the run: $1"
    echo "- heapsift commit: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown); library: $2"
}

# awk_lib: prepend to an awk program ("$awk_lib"'...'). median(list): the median of a
# space-separated list of numbers ("" when empty); extreme(list, want_max): its largest
# (want_max 1) or smallest.
awk_lib='
function median(list,    n, a, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function extreme(list, want_max,    n, a, i, m) {
    n = split(list, a, " ")
    m = a[1]
    for (i = 2; i <= n; i++)
        if ((want_max && a[i] + 0 > m + 0) || (!want_max && a[i] + 0 < m + 0))
            m = a[i]
    return m
}'
