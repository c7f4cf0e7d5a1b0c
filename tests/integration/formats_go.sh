#!/bin/sh
# Go's ?debug=1 text heap profile (`heap profile: ... @ heap/2*RATE` with `# 0x... name
# file:line` frame comments), made here by a Go program through runtime/pprof. heapsift
# reads the names from the comments (inlined frames included). `go tool pprof` reads the
# same file (symbolizing it with the program): totals of every sample type must be equal.
# The program also writes the same profile as protobuf (debug=0) right after, whose names
# come from the runtime itself, inlining included (pprof's own symbolization of Go
# binaries does not expand inlined calls): every row with flat use (function and bytes)
# of `go tool pprof` on it must be ours, for each sample type.
# Usage: formats_go.sh BUILD_DIR SOURCE_DIR. Exits 77 when go is missing.
set -eu
build=$1
hs=$build/heapsift
command -v go >/dev/null 2>&1 || { echo "go not found: skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPATH="$tmp/gopath" GO111MODULE=on
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

mkdir "$tmp/gen"
printf 'module gen\n\ngo 1.19\n' >"$tmp/gen/go.mod"
cat >"$tmp/gen/main.go" <<'EOF'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func leafA(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

//go:noinline
func leafB(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 100000)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
}

func inlined(n int) []byte { return make([]byte, n) }

//go:noinline
func caller(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, inlined(3000+i%100))
	}
}

func main() {
	runtime.MemProfileRate = 32768
	leafA(3000)
	leafB(300)
	caller(5000)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 1); err != nil {
		panic(err)
	}
	f.Close()
	f, err = os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
}
EOF
(cd "$tmp/gen" && go build -o "$tmp/gen/gen" .) || { fail "go build"; exit 1; }
"$tmp/gen/gen" "$tmp/heap.txt" "$tmp/heap.pb.gz"
head -n 1 "$tmp/heap.txt" | grep -q '^heap profile: .* @ heap/65536$' ||
    fail "unexpected header: $(head -n 1 "$tmp/heap.txt")"

# Rows with flat use, as "flat name", from the "flat%" heading on (pprof's " (inline)"
# mark is a matter of the view, not of the reader).
flat_rows() {
    sed -n '/flat%/,$p' | sed 's/ (inline)$//' | awk 'NR > 1 && $1 != "0" {print $1, $NF}' | sort
}
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    go tool pprof -top -unit=B -sample_index=$st "$tmp/gen/gen" "$tmp/heap.txt" >"$tmp/want" 2>/dev/null
    "$hs" top --unit B --sample-type $st "$tmp/heap.txt" >"$tmp/got" 2>"$tmp/err" ||
        { fail "heapsift top --sample-type $st"; cat "$tmp/err" >&2; continue; }
    want=$(grep 'total$' "$tmp/want" | sed 's/.* of //') got=$(grep 'total$' "$tmp/got" | sed 's/.* of //')
    echo "$st: go tool pprof $want, heapsift $got"
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "$st: total '$got' != '$want'"
    go tool pprof -top -unit=B -sample_index=$st "$tmp/heap.pb.gz" 2>/dev/null | flat_rows >"$tmp/want.rows"
    flat_rows <"$tmp/got" >"$tmp/got.rows"
    cmp -s "$tmp/want.rows" "$tmp/got.rows" ||
        { fail "$st: rows with flat use differ (pprof, then heapsift)"; cat "$tmp/want.rows" "$tmp/got.rows" >&2; }
done
grep -q 'main.inlined$' "$tmp/got" || fail "no row for the inlined function main.inlined"

# The runtime's own leaf frames are in a record's addresses without a name (Go's protobuf
# leaves them out): their bytes belong to the first named frame, as there. A record
# whose every frame is unnamed keeps them. (A run of the program above samples such a
# record now and then: an init-time allocation.)
cat >"$tmp/leaf.txt" <<'EOF'
heap profile: 3: 3072 [3: 3072] @ heap/0
1: 1024 [1: 1024] @ 0x4113f3 0x4741de 0x437413 0x461121
#	0x4741dd	time.init+0x11d		/usr/lib/go/src/time/format.go:1507
#	0x437412	runtime.main+0x1d2	/usr/lib/go/src/runtime/proc.go:233

2: 2048 [2: 2048] @ 0x4113f3 0x411500
EOF
"$hs" top --unit B --sample-type inuse_space "$tmp/leaf.txt" >"$tmp/leaf.top" 2>"$tmp/err" ||
    { fail "heapsift top on runtime leaf frames"; cat "$tmp/err" >&2; }
flat_rows <"$tmp/leaf.top" >"$tmp/leaf.rows"
printf '1024B time.init\n2048B <unknown>\n' | sort >"$tmp/leaf.want"
cmp -s "$tmp/leaf.want" "$tmp/leaf.rows" ||
    { fail "runtime leaf frames: rows with flat use (want, then got)"; cat "$tmp/leaf.want" "$tmp/leaf.rows" >&2; }

if [ $fails -ne 0 ]; then
    echo "formats_go: $fails check(s) failed" >&2
    exit 1
fi
echo "formats_go: ok"
