// SPDX-License-Identifier: MIT
//
// A Go plugin that works the Go runtime hard inside rpcd: its handler allocates, spins
// goroutines in loops without a function call (only asynchronous preemption, by signal, can
// stop them) and calls runtime.GC() meanwhile, which must stop every goroutine first.
package main

/*
#include "glue.h"
*/
import "C"

import (
	"encoding/json"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

func main() {}

//export goInit
func goInit() {
	// Writes to a closed stdout or stderr fail with EPIPE instead of ending the process.
	if os.Getenv("GOFIXTURE_KEEP_SIGPIPE") == "" {
		signal.Ignore(syscall.SIGPIPE)
	}
	if os.Getenv("GOFIXTURE_NOTIFY_SIGTERM") != "" {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM)
	}
}

var sink [][]byte

// spin runs until stop is set, n iterations at most, in a loop with no call in it: no
// cooperative preemption point. It reports whether it was stopped before n.
func spin(stop *int32, n int) bool {
	x := 0
	for i := 0; i < n; i++ {
		if atomic.LoadInt32(stop) != 0 {
			return true
		}
		x += i ^ (x >> 3)
	}
	return x == -1
}

//export goChurn
func goChurn(call *C.rpcd_call, params *C.char, length C.size_t) C.int {
	p := struct {
		Spinners int `json:"spinners"`
		Spin     int `json:"spin"`
		Rounds   int `json:"rounds"`
	}{Spinners: 2, Spin: 40000000000, Rounds: 3}
	if params != nil {
		_ = json.Unmarshal(C.GoBytes(unsafe.Pointer(params), C.int(length)), &p)
	}
	var wg sync.WaitGroup
	var stop int32
	stopped := make([]bool, p.Spinners)
	for g := 0; g < p.Spinners; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			stopped[g] = spin(&stop, p.Spin)
		}(g)
	}
	// While the spinners run, each collection has to stop them: only a preemption signal can.
	// Without one, it waits until they give up: tens of seconds, so that only collections that
	// cannot stop them let them run out, however long the machine's scheduler takes.
	var longest time.Duration
	for r := 0; r < p.Rounds; r++ {
		garbage := make([][]byte, 0, 256)
		for i := 0; i < 256; i++ {
			garbage = append(garbage, make([]byte, 4096))
		}
		sink = garbage
		start := time.Now()
		runtime.GC()
		if took := time.Since(start); took > longest {
			longest = took
		}
	}
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	sink = nil
	spunOut := false
	for _, s := range stopped {
		spunOut = spunOut || !s
	}
	out, _ := json.Marshal(map[string]interface{}{
		"gc_ms":    float64(longest.Microseconds()) / 1000,
		"spun_out": spunOut,
	})
	return C.glue_result(call, (*C.char)(unsafe.Pointer(&out[0])), C.size_t(len(out)))
}
