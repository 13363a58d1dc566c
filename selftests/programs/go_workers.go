// A Go program for the patcher's test (no_unwind_test): static, no
// .eh_frame, system calls from the runtime's own assembly.  64 goroutines
// each block reading a pipe that a timer fills, read a file, and send back
// what they got; main checks every answer and prints a summary that does
// not depend on scheduling.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

const workers = 64

type answer struct {
	id   int
	msg  string
	size int
	sum  [32]byte
}

func worker(id int, file string, out chan<- answer, wg *sync.WaitGroup) {
	defer wg.Done()
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipe:", err)
		os.Exit(2)
	}
	defer r.Close()
	// the writer wakes on a timer; the read below blocks until then
	time.AfterFunc(time.Duration(1+id%7)*time.Millisecond, func() {
		fmt.Fprintf(w, "worker %d", id)
		w.Close()
	})
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "read:", err)
		os.Exit(2)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readfile:", err)
		os.Exit(2)
	}
	<-time.After(time.Millisecond)
	out <- answer{id, string(buf[:n]), len(data), sha256.Sum256(data)}
}

func main() {
	file := "/etc/os-release"
	if len(os.Args) > 1 {
		file = os.Args[1]
	}
	out := make(chan answer, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go worker(i, file, out, &wg)
	}
	wg.Wait()
	close(out)
	var all []answer
	for a := range out {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	bad := 0
	for i, a := range all {
		if a.id != i || a.msg != fmt.Sprintf("worker %d", i) || a.size != all[0].size ||
			a.sum != all[0].sum {
			bad++
		}
	}
	if len(all) != workers || bad != 0 {
		fmt.Printf("FAIL: %d answers, %d wrong\n", len(all), bad)
		os.Exit(1)
	}
	fmt.Printf("%d goroutines agree: %d bytes, sha256 %x\n", workers, all[0].size, all[0].sum)
}
