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
# The same install logic as the tests' (only what is missing), with this list.
exec sh "$(dirname "$0")/../scripts/setup.sh" libgoogle-perftools-dev libgoogle-perftools4 \
    libtcmalloc-minimal4 google-perftools libjemalloc2 libjemalloc-dev heaptrack sqlite3 \
    valgrind time g++
