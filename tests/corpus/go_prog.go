// The Go program of the readers' corpus (make_real.sh, integration/readers_corpus.sh):
// allocations at two noinline sites, then its ?debug=1 heap text, a CPU profile and the
// goroutine and threadcreate texts.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64+i%64))
	}
}

//go:noinline
func allocBig(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 100000))
	}
}

//go:noinline
func burn() int {
	s := 0
	for i := 0; i < 100000000; i++ {
		s += i * i
	}
	return s
}

func write(path, name string, debug int) {
	f, _ := os.Create(path)
	pprof.Lookup(name).WriteTo(f, debug)
	f.Close()
}

func main() {
	runtime.MemProfileRate = 4096
	allocSmall(20000)
	allocBig(50)
	runtime.GC()
	write(os.Args[1], "heap", 1)
	if len(os.Args) > 2 {
		cf, _ := os.Create(os.Args[2])
		pprof.StartCPUProfile(cf)
		_ = burn()
		pprof.StopCPUProfile()
		cf.Close()
		write(os.Args[3], "goroutine", 1)
		write(os.Args[4], "threadcreate", 1)
	}
}
