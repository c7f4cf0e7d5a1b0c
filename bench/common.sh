# bench/common.sh: what the stand-alone bench scripts share (bigheap.sh, floor.sh,
# labels_cost.sh): their command line, BUILD [--before LIB] [--record], and the lines
# that open a report on the machine. Sourced, not run.
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
