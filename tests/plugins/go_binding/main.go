// SPDX-License-Identifier: MIT
//
// A plugin on the Go binding (bindings/go/rpcd) that works the Go runtime hard: its handlers,
// and the goroutines that complete its deferred calls, allocate, spin goroutines in loops
// without a function call (only asynchronous preemption, by signal, can stop them) and call
// runtime.GC() meanwhile, which must stop every goroutine first.
package main

import (
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"

	"rpcd.local/rpcd"
)

func main() {}

func init() {
	rpcd.Define(rpcd.Plugin{Name: "gobinding", Version: "1.0.0", Init: setup})
}

var sink [][]byte
var sinkLock sync.Mutex

// spin runs until stop is set, n iterations at most, with no cooperative preemption point.
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

// churn spins a goroutine while it collects garbage three times; spun_out says whether the
// spinner gave up before the collections were over (they cannot stop it without preemption).
func churn() (string, error) {
	var wg sync.WaitGroup
	var stop int32
	stopped := make([]bool, 1)
	for g := range stopped {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			// Long enough (tens of seconds) that only collections that cannot stop it (no
			// preemption) let it run out; how long the machine's scheduler takes does not.
			stopped[g] = spin(&stop, 40000000000)
		}(g)
	}
	for r := 0; r < 3; r++ {
		garbage := make([][]byte, 0, 256)
		for i := 0; i < 256; i++ {
			garbage = append(garbage, make([]byte, 4096))
		}
		sinkLock.Lock()
		sink = garbage
		sinkLock.Unlock()
		runtime.GC()
	}
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	out, err := json.Marshal(map[string]bool{"spun_out": !stopped[0]})
	return string(out), err
}

func setup(r rpcd.Registrar) error {
	if err := r.Method("gobinding.churn", 0, "Churns in the handler.",
		func(call rpcd.Call, params []byte) (string, error) { return churn() }); err != nil {
		return err
	}
	return r.Method("gobinding.churn_later", 0, "Churns in a goroutine, then completes.",
		func(call rpcd.Call, params []byte) (string, error) { return rpcd.Later(call, churn) })
}
