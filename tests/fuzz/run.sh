#!/bin/sh
# Builds the readers' libFuzzer targets (fuzz_*.c, each against the src/common sources it
# needs) with clang-14 -fsanitize=fuzzer,address,undefined, makes a seed corpus from real
# programs (gen_corpus.sh), and runs each target on it for a bounded time: the corpus
# first (a regression run), then new inputs. Crashes, leaks, UB and timeouts fail it.
# Usage: run.sh BUILD_DIR SOURCE_DIR [SECONDS per target, default 20]. Exits 77 when
# clang-14 or its libFuzzer runtime is missing.
set -eu
build=$1
src=$2
secs=${3:-20}
cc=$(command -v clang-14 || command -v clang || true)
[ -n "$cc" ] || { echo "clang-14 not found: skipping"; exit 77; }
out=$build/fuzz
mkdir -p "$out"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$out/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" 2>/dev/null ||
    { echo "$cc cannot link -fsanitize=fuzzer (libclang-rt-14-dev): skipping"; exit 77; }

common="readers/read_legacy.c readers/read_legacy_maps.c readers/read_legacy_go.c
    readers/read_spool.c readers/readers.c model/pprof.c base/gzip.c base/fileio.c base/fdio.c
    base/pb.c base/buf.c model/profile.c base/utf8.c model/demangle.c model/demangle_profile.c
    model/dropframes.c"
set --
for c in $common; do set -- "$@" "$src/src/common/$c"; done
for t in legacy pprof any; do
    "$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$src/src/common" "$src/tests/fuzz/fuzz_$t.c" "$@" -l:libiberty.a -lz -lm -o "$out/fuzz_$t"
done

rm -rf "$out/seeds"
sh "$src/tests/fuzz/gen_corpus.sh" "$build" "$out/seeds"
fails=0
for t in legacy pprof any; do
    mkdir -p "$out/corpus_$t" "$out/artifacts_$t"
    cp "$out/seeds/$t"/* "$out/corpus_$t/" 2>/dev/null || true
    # Inputs that once crashed a reader stay in the corpus for good.
    cp "$src/tests/fuzz/regressions/$t"/* "$out/corpus_$t/" 2>/dev/null || true
    echo "fuzz_$t: $(ls "$out/corpus_$t" | wc -l) corpus files, $secs s"
    if ! "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts_$t/" "$out/corpus_$t" \
        >"$out/fuzz_$t.log" 2>&1; then
        echo "FAIL: fuzz_$t (log $out/fuzz_$t.log; artifacts in $out/artifacts_$t):" >&2
        grep -E 'ERROR|SUMMARY|runtime error' "$out/fuzz_$t.log" | head -n 10 >&2
        fails=$((fails + 1))
    else
        grep -E '^stat::number_of_executed_units' "$out/fuzz_$t.log" || true
    fi
done
[ $fails -eq 0 ] || { echo "fuzz: $fails target(s) failed" >&2; exit 1; }
echo "fuzz: ok"
