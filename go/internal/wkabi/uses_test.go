//go:build cgo && !wkcore_purego

package wkabi

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongim/wkcore/go/internal/status"
)

// Acquire and Release count calls; Close refuses new ones, waits for those in
// flight, and succeeds once.
func TestUses(t *testing.T) {
	var u Uses
	if u.Closed() {
		t.Fatal("the zero Uses is closed")
	}
	if !u.Acquire() || !u.Acquire() {
		t.Fatal("Acquire on an open Uses")
	}
	u.Release()
	closed := make(chan bool)
	go func() { closed <- u.Close() }()
	for !u.Closed() {
		runtime.Gosched()
	}
	// Close has started: new calls are refused, and it waits for the one in
	// flight.
	if u.Acquire() {
		t.Fatal("Acquire after Close started")
	}
	select {
	case <-closed:
		t.Fatal("Close returned with a call in flight")
	case <-time.After(20 * time.Millisecond):
	}
	u.Release()
	if !<-closed {
		t.Fatal("the first Close returned false")
	}
	if u.Close() {
		t.Fatal("a second Close returned true")
	}
	if u.Acquire() || !u.Closed() {
		t.Fatal("Acquire after Close")
	}
}

// Concurrent Closes and calls: exactly one Close wins; no call is in flight
// once it returns; every call that was let in is released.
func TestUsesConcurrentClose(t *testing.T) {
	for round := 0; round < 50; round++ {
		var (
			u        Uses
			inFlight atomic.Int64
			wins     atomic.Int32
			late     atomic.Int32
			wg       sync.WaitGroup
			start    = make(chan struct{})
		)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for u.Acquire() {
					inFlight.Add(1)
					runtime.Gosched()
					inFlight.Add(-1)
					u.Release()
				}
			}()
		}
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if u.Close() {
					wins.Add(1)
					if inFlight.Load() != 0 {
						late.Add(1)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || late.Load() != 0 {
			t.Fatalf("round %d: %d Closes won, %d saw a call in flight", round, wins.Load(), late.Load())
		}
		if u.n.Load() != usesClosed {
			t.Fatalf("round %d: count %#x after every call returned", round, u.n.Load())
		}
	}
}

// A registry's Close releases it once; calls after it are refused.
func TestRegistryClose(t *testing.T) {
	r, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if families, err := r.Families(); err != nil || len(families) != 0 {
		t.Fatalf("fresh registry: %+v, %v", families, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != status.ErrHandleClosed {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Families(); err != status.ErrHandleClosed {
		t.Fatalf("Families after Close: %v", err)
	}
	if err := r.With(func(Ptr) error { t.Error("With ran after Close"); return nil }); err != status.ErrHandleClosed {
		t.Fatalf("With after Close: %v", err)
	}
	var nilRegistry *Registry
	if nilRegistry.Close() != status.ErrHandleClosed || nilRegistry.With(nil) != status.ErrHandleClosed {
		t.Fatal("nil registry")
	}
	g1, err1 := GlobalRegistry()
	g2, err2 := GlobalRegistry()
	if err1 != nil || err2 != nil || g1 != g2 {
		t.Fatalf("GlobalRegistry: %p %v, %p %v", g1, err1, g2, err2)
	}
	if ABIVersion != 3 {
		t.Fatalf("ABIVersion %d", ABIVersion)
	}
}
