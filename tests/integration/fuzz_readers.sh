#!/bin/sh
# The readers' fuzzers (tests/fuzz/run.sh): built with clang-14 and libFuzzer, seeded from
# real programs' profiles, 20 s each. Usage: fuzz_readers.sh BUILD_DIR SOURCE_DIR.
# Exits 77 (skip) when clang-14 or libFuzzer is missing.
exec sh "$2/tests/fuzz/run.sh" "$1" "$2" "${HS_FUZZ_SECONDS:-20}"
