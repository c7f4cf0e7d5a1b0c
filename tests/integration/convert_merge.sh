#!/bin/sh
# heapsift convert and merge, on profiles made here by real programs: heapsift's own
# (heapsift run), gperftools' HEAPPROFILE and jemalloc's heap_v2.
#  - convert --to pprof: `go tool pprof` reads it with the totals heapsift top shows for
#    the original, for every sample type (and, for the originals go tool pprof reads
#    itself, heapsift's and gperftools', the totals it shows for them);
#  - convert --to legacy: `go tool pprof` (and jeprof, when installed) read it with the
#    same totals;
#  - convert --to collapsed: the values add up to the total, stacks are root first;
#  - merge A A B: totals are 2A + B, all three by go tool pprof (A heapsift's profile, B
#    gperftools'); merging profiles of different sample types fails with status 2 and
#    names both files; merge A is no bigger than A.
# Usage: convert_merge.sh BUILD_DIR SOURCE_DIR. Exits 77 when go, gperftools, jemalloc or
# jeprof is missing (scripts/setup.sh installs them), never dropping a part.
set -eu
build=$1
hs=$build/heapsift
command -v go >/dev/null 2>&1 || { echo "go not found: skipping"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "no C compiler: skipping"; exit 77; }
tc=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1 || true)
[ -n "$tc" ] || { echo "libtcmalloc.so.4 not found (libgoogle-perftools4): skipping"; exit 77; }
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -n "$je" ] || { echo "libjemalloc.so.2 not found: skipping"; exit 77; }
command -v jeprof >/dev/null 2>&1 || { echo "jeprof not found (libjemalloc-dev): skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
total() { sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p'; }
pprof_total() { go tool pprof -top -unit=B -sample_index="$2" "$1" 2>/dev/null | total; }
hs_total() { "$hs" top --unit B --sample-type "$2" "$1" 2>/dev/null | total; }

cat >"$tmp/prog.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
static void *keep[100000];
static int nkeep;
__attribute__((noinline)) void *big_site(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *small_site(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
int main(void)
{
    for (int i = 0; i < 300; i++)
        keep[nkeep++] = big_site(150000 + i);
    for (int i = 0; i < 40000; i++) {
        void *p = small_site(64 + (size_t)(i % 3000));
        if (i % 3 == 0)
            keep[nkeep++] = p;
        else
            free(p);
    }
    return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" "$tmp/prog.c"
"$hs" run -q -o "$tmp/hs.pb.gz" --rate 32768 -- "$tmp/prog" || fail "heapsift run"
files="$tmp/hs.pb.gz"
HEAPPROFILE="$tmp/hp" LD_PRELOAD=$tc "$tmp/prog" 2>/dev/null
cp "$(ls "$tmp"/hp.*.heap | tail -n 1)" "$tmp/gperf.heap" && files="$files $tmp/gperf.heap" ||
    fail "gperftools wrote no HEAPPROFILE file"
MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:14,prof_prefix:$tmp/je" \
    LD_PRELOAD=$je "$tmp/prog"
cp "$(ls "$tmp"/je.*.heap | head -n 1)" "$tmp/jemalloc.heap" && files="$files $tmp/jemalloc.heap" ||
    fail "jemalloc wrote no heap_v2 file"

types_of() {
    go tool pprof -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | sed 's/\/[a-z]*//g; s/\[dflt\]//'
}

for f in $files; do
    name=$(basename "$f")
    "$hs" convert --to pprof -q -o "$tmp/c.pb.gz" "$f" || { fail "$name: convert --to pprof"; continue; }
    "$hs" convert --to legacy -o "$tmp/c.heap" "$f" || { fail "$name: convert --to legacy"; continue; }
    for st in $(types_of "$tmp/c.pb.gz"); do
        want=$(hs_total "$f" "$st")
        p=$(pprof_total "$tmp/c.pb.gz" "$st")
        lst=$st
        [ "$(types_of "$tmp/c.heap" | wc -w)" -eq 2 ] && lst=${st#inuse_}
        l=$(pprof_total "$tmp/c.heap" "$lst")
        echo "$name $st: heapsift $want, pprof on --to pprof $p, on --to legacy $l"
        [ -n "$want" ] && [ "$want" = "$p" ] || fail "$name $st: pprof conversion total '$p' != '$want'"
        [ "$want" = "$l" ] || fail "$name $st: legacy conversion total '$l' != '$want'"
        case $name in
        hs.pb.gz | gperf.heap)
            o=$(pprof_total "$f" "$st")
            [ "$o" = "$want" ] || fail "$name $st: go tool pprof reads the original as '$o', heapsift '$want'" ;;
        esac
        "$hs" convert --to collapsed --sample-type "$st" -o "$tmp/c.txt" "$f"
        c=$(awk '{s += $NF} END {printf "%d", s}' "$tmp/c.txt")
        [ "$c" = "$want" ] || fail "$name $st: collapsed values add up to $c, not $want"
    done
    grep -q '^[^ ]*main;[^ ]*big_site ' "$tmp/c.txt" ||
        fail "$name: no folded stack '...main;big_site' (root first)"
    j=$(jeprof --text --show_bytes "$tmp/prog" "$tmp/c.heap" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B/\1/p')
    want=$(types_of "$tmp/c.pb.gz" | tr ' ' '\n' | grep -x 'inuse_space' || true)
    [ -z "$want" ] || [ "$j" = "$(hs_total "$f" inuse_space)" ] ||
        fail "$name: jeprof reads the legacy conversion as $j bytes"
done

"$hs" merge -o "$tmp/m.pb.gz" "$tmp/hs.pb.gz" "$tmp/hs.pb.gz" "$tmp/gperf.heap" ||
    fail "merge of same-typed profiles"
# The inputs' totals by go tool pprof, not by heapsift top.
for st in alloc_space inuse_space inuse_objects; do
    a=$(pprof_total "$tmp/hs.pb.gz" $st) b=$(pprof_total "$tmp/gperf.heap" $st)
    m=$(pprof_total "$tmp/m.pb.gz" $st)
    echo "merge $st: 2 x $a + $b = $m"
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ "$m" = $((2 * a + b)) ] ||
        fail "merge $st: '$m' != 2 x '$a' + '$b' (go tool pprof)"
done
rc=0
"$hs" merge -o "$tmp/bad.pb.gz" "$tmp/hs.pb.gz" "$tmp/jemalloc.heap" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "merge of different sample types: status $rc, want 2"
grep -q 'hs.pb.gz.*jemalloc.heap' "$tmp/err" || { fail "merge error names neither file:"; cat "$tmp/err" >&2; }
[ ! -e "$tmp/bad.pb.gz" ] || fail "a failed merge wrote its output"

# merge of one profile: as big as its input, give or take (the previous merge let the
# sample keys it built leak into its mapping and location keys, and wrote a new mapping
# and location for every stack prefix: 2 mappings became 7, and 2 became 917,512 on a
# profile of 131,074 stacks)
"$hs" merge -o "$tmp/one.pb.gz" "$tmp/hs.pb.gz" || fail "merge of one profile"
in=$(gzip -dc "$tmp/hs.pb.gz" | wc -c)
out=$(gzip -dc "$tmp/one.pb.gz" | wc -c)
echo "merge of one profile: $in -> $out bytes"
[ "$out" -le $((in + in / 20)) ] || fail "merge of one profile grew it: $in -> $out bytes"

if [ $fails -ne 0 ]; then
    echo "convert_merge: $fails check(s) failed" >&2
    exit 1
fi
echo "convert_merge: ok"
