package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
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
		keep = append(keep, make([]byte, 100000))
	}
}

func inlined(n int) []byte { return make([]byte, n) }

//go:noinline
func caller(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, inlined(3000))
	}
}

//go:noinline
func temp(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 50000)
		_ = b
	}
}

//go:noinline
func rec(d int) {
	if d == 0 {
		leafA(200)
		return
	}
	rec(d - 1)
}

//go:noinline
func small(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

func main() {
	// An optional second argument: that many more leafA objects (a second profile for
	// the diff checks, written by a second run of the same program). An optional third:
	// the sampling rate from here on (default 4096; 1 records every allocation, so the
	// program's own rows are exact, but the runtime's allocations before main stay
	// sampled at Go's default rate).
	extra := 0
	if len(os.Args) > 2 {
		extra, _ = strconv.Atoi(os.Args[2])
	}
	runtime.MemProfileRate = 4096
	if len(os.Args) > 3 {
		runtime.MemProfileRate, _ = strconv.Atoi(os.Args[3])
	}
	leafA(1000 + extra)
	leafB(300)
	caller(500)
	temp(2000)
	rec(5)
	small(100000)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.WriteHeapProfile(f)
	f.Close()
}
