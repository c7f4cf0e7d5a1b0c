// goserve: a Go program with a known heap, serving Go's own net/http/pprof endpoint on a
// free loopback port (written to the file given as the first argument), for
// tests/integration/web_go.sh: `heapsift web` must poll a Go process like a heapsift one.
// leakySite keeps 2000 blocks of 4 KiB live; the program then waits to be killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
)

var kept [][]byte

//go:noinline
func leakySite() {
	for i := 0; i < 2000; i++ {
		b := make([]byte, 4096)
		b[0] = byte(i)
		kept = append(kept, b)
	}
}

func main() {
	runtime.MemProfileRate = 4096
	leakySite()
	runtime.GC() // the heap profile shows the state as of the last GC
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(os.Args[1]+".tmp", []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil ||
		os.Rename(os.Args[1]+".tmp", os.Args[1]) != nil {
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, http.Serve(ln, nil))
}
