#!/bin/sh
# bench/setup.sh: installs the Debian packages the benchmark alone needs (the peers it
# compares heapsift with, the real program it profiles, and the measuring tools), only
# those missing; a machine that has them all installs nothing and prints nothing. The
# build and the tests need none of these (scripts/setup.sh covers those). Called by
# bench/run.sh before it runs anything; run it by hand with `sh bench/setup.sh`.
#   gperftools' heap profiler: libtcmalloc.so.4 (libgoogle-perftools4, pulled in by -dev)
#   jemalloc with its sampling profiler: libjemalloc2 (+ -dev for jeprof)
#   heaptrack; sqlite3 (the real program); valgrind (callgrind); time (GNU time: max RSS)
set -eu

need="libgoogle-perftools-dev libgoogle-perftools4 libtcmalloc-minimal4 google-perftools \
libjemalloc2 libjemalloc-dev heaptrack sqlite3 valgrind time g++"

missing=""
for p in $need; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "heapsift bench setup: installing$missing" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
