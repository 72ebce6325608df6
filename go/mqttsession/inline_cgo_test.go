//go:build cgo && !wkcore_purego

package mqttsession

// The differential test of the inline protocol (words.go): the Go inline
// Begin and Done and the library's own (wk_owner_begin, wk_owner_op_done)
// run on the same owners at once, in every combination, while fences,
// lease expiries, quiesces and a stop race them; every outcome is checked
// against a tally, and the library's counts against the tally at the end.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The layout version the library reports is this package's (init checks it
// too, and panics on a mismatch).
func TestInlineLayoutMatchesTheLibrary(t *testing.T) {
	r, err := NewOwners(OwnerOptions{NodeID: 3, BootID: "boot", Capacity: 1, MaxOperations: 1,
		PendingTimeout: time.Second, MaxLease: time.Second, CloseRetry: time.Second})
	must(t, err)
	if !r.inlineCapable() {
		t.Fatal("a hosted registry must admit inline")
	}
	// Go's reading of the registry clock (the library's formula on the
	// published words) brackets the library's own.
	for i := 0; i < 1000; i++ {
		before := r.c.reg.clock.now()
		now := r.registryNow()
		after := r.c.reg.clock.now()
		if now < before || now > after {
			t.Fatalf("registry clock %d outside Go's readings [%d, %d] (kind %d)", now, before, after, r.c.reg.clock.kind)
		}
	}
	t.Logf("clock kind %d", r.c.reg.clock.kind)
}

type diffRound struct {
	owner    Owner
	fenced   atomic.Bool // set after the fence (or the expiry) is in
	quiesced atomic.Bool // set after Quiesce returned nil
	inflight atomic.Int64
}

func TestInlineMatchesLibraryUnderFenceExpiryQuiesceAndStop(t *testing.T) {
	for _, manual := range []bool{false, true} {
		name := "real-clock"
		if manual {
			name = "manual"
		}
		t.Run(name, func(t *testing.T) { diffRun(t, manual) })
	}
}

func diffRun(t *testing.T, manual bool) {
	const (
		maxOps  = 3
		workers = 4
		rounds  = 8
	)
	iterations := 4000
	if debugBuild { // a GC per C call: the pointer checks, not the stress
		iterations = 150
	} else if raceEnabled {
		iterations = 600
	}
	opts := OwnerOptions{NodeID: 3, BootID: "boot", Capacity: 4, MaxOperations: maxOps,
		PendingTimeout: time.Minute, MaxLease: time.Minute, CloseRetry: time.Minute}
	var clock *fakeClock
	if manual {
		clock = newFakeClock()
		opts.Now = clock.Now
	}
	r, err := NewOwners(opts)
	must(t, err)
	if !r.inlineCapable() {
		t.Fatal("the registry must admit inline")
	}
	ctx := context.Background()
	now := time.Now
	if manual {
		now = clock.Now
	}
	newRound := func(i int) *diffRound {
		o, err := r.Reserve(ownerClaim("c"+string(rune('a'+i))), okClose)
		must(t, err)
		must(t, r.Activate(o, 1, now().Add(30*time.Second)))
		return &diffRound{owner: o}
	}
	var cur atomic.Pointer[diffRound]
	cur.Store(newRound(0))

	// The tally: admissions by begin path, ends by done path (0 inline, 1
	// the library's), refusals by begin path and kind.
	var admitted, ended [2]atomic.Int64
	var fenced, limited, stoppedN [2]atomic.Int64
	var attempts atomic.Int64
	var stopping, stopped atomic.Bool // before StopAdmission, after it
	var workersDone atomic.Int32
	fail := func(format string, args ...any) { t.Errorf(format, args...) }

	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			defer workersDone.Add(1)
			seed := uint32(g*7919 + 1)
			for i := 0; i < iterations; i++ {
				seed ^= seed << 13
				seed ^= seed >> 17
				seed ^= seed << 5
				beginPath, donePath := int(seed&1), int(seed>>1&1)
				rd := cur.Load()
				fencedBefore, stoppedBefore := rd.fenced.Load(), stopped.Load()
				var op *Operation
				var err error
				if beginPath == 0 {
					op, err = r.Begin(ctx, rd.owner)
				} else {
					op, err = r.libraryBegin(ctx, rd.owner)
				}
				attempts.Add(1)
				if err != nil {
					switch err {
					case ErrOwnerFenced:
						if w := r.ownerWord(rd.owner); w != 0 && w&wordStageMask != wordStageClosing {
							fail("path %d: Fenced with the owner not closing (word %#x)", beginPath, w)
						}
						fenced[beginPath].Add(1)
					case ErrOwnerLimit:
						if stoppedBefore {
							fail("path %d: Limit after the stop", beginPath)
						}
						limited[beginPath].Add(1)
					case ErrOwnerStopped:
						if !stopping.Load() {
							fail("path %d: Stopped before the stop", beginPath)
						}
						stoppedN[beginPath].Add(1)
					default:
						fail("path %d: unexpected %v", beginPath, err)
					}
					if stoppedBefore && err != ErrOwnerStopped {
						fail("path %d: %v after the stop, want Stopped", beginPath, err)
					}
					// A fenced owner stays fenced: wait for the next one (the
					// controller publishes it after its quiesce).
					for err == ErrOwnerFenced && cur.Load() == rd && !stopping.Load() {
						runtime.Gosched()
					}
					continue
				}
				if fencedBefore {
					fail("path %d: admitted after the fence", beginPath)
				}
				if stoppedBefore {
					fail("path %d: admitted after the stop", beginPath)
				}
				if n := rd.inflight.Add(1); n > maxOps {
					fail("path %d: %d scopes admitted at once, bound %d", beginPath, n, maxOps)
				}
				if rd.quiesced.Load() {
					fail("path %d: quiesce returned while this scope was admitted", beginPath)
				}
				admitted[beginPath].Add(1)
				if seed&12 != 0 {
					runtime.Gosched() // hold the scope while others run
				}
				rd.inflight.Add(-1)
				if donePath == 0 {
					op.Done()
					op.libraryDone() // idempotent, whichever path ended it
				} else {
					op.libraryDone()
					op.Done()
				}
				ended[donePath].Add(1)
			}
		}(g)
	}

	// The controller: each round fences (or lets the lease expire) the
	// current owner and quiesces it while the workers run, then publishes
	// a new one; the last round stops admission instead.
	waitFor := func(target int64) {
		for attempts.Load() < target && workersDone.Load() < workers {
			runtime.Gosched()
		}
	}
	total := int64(iterations * workers)
	for round := 0; round < rounds; round++ {
		waitFor(total * int64(round+1) / (rounds + 2))
		rd := cur.Load()
		refused := fenced[0].Load() + fenced[1].Load()
		if manual && round%2 == 1 {
			clock.Add(31 * time.Second) // past the lease: the next begin fences it
			rd.fenced.Store(true)
		} else {
			must(t, r.Fence(rd.owner))
			rd.fenced.Store(true)
		}
		// Let the workers run into the fence before the quiesce.
		for fenced[0].Load()+fenced[1].Load() == refused && workersDone.Load() < workers {
			runtime.Gosched()
		}
		if err := r.Quiesce(ctx, rd.owner); err != nil {
			t.Fatalf("round %d: Quiesce: %v", round, err)
		}
		rd.quiesced.Store(true)
		if n := rd.inflight.Load(); n != 0 {
			t.Errorf("round %d: Quiesce returned with %d scopes admitted", round, n)
		}
		if w := r.ownerWord(rd.owner); w != 0 {
			t.Errorf("round %d: a quiesced owner is still held (word %#x)", round, w)
		}
		cur.Store(newRound(round + 1))
	}
	waitFor(total * (rounds + 1) / (rounds + 2))
	stopping.Store(true)
	r.StopAdmission()
	stopped.Store(true)
	wg.Wait()
	if workersDone.Load() != workers {
		t.Fatal("workers did not finish")
	}

	if _, err := r.Begin(ctx, cur.Load().owner); err != ErrOwnerStopped {
		t.Errorf("inline Begin after the stop: %v", err)
	}
	if _, err := r.libraryBegin(ctx, cur.Load().owner); err != ErrOwnerStopped {
		t.Errorf("library Begin after the stop: %v", err)
	}
	must(t, r.Close(ctx))
	s := r.Snapshot()
	a := admitted[0].Load() + admitted[1].Load()
	e := ended[0].Load() + ended[1].Load()
	if a != e {
		t.Errorf("admitted %d, ended %d", a, e)
	}
	if s.Held != 0 || s.Operations != 0 || s.Closing != 0 || s.Active != 0 {
		t.Errorf("after Close: %+v", s)
	}
	for p := 0; p < 2; p++ {
		if admitted[p].Load() == 0 || ended[p].Load() == 0 {
			t.Errorf("path %d never ran: admitted %v, ended %v", p, admitted[p].Load(), ended[p].Load())
		}
	}
	t.Logf("admitted inline %d / library %d; ended inline %d / library %d; fenced %d/%d, limit %d/%d, stopped %d/%d",
		admitted[0].Load(), admitted[1].Load(), ended[0].Load(), ended[1].Load(), fenced[0].Load(), fenced[1].Load(),
		limited[0].Load(), limited[1].Load(), stoppedN[0].Load(), stoppedN[1].Load())
}

// The operations gauge counts scopes whichever path began and ended them.
func TestInlineGaugeCountsBothPaths(t *testing.T) {
	r, clock := publicFixture(t, 4, 4)
	o, err := r.Reserve(ownerClaim("g"), okClose)
	must(t, err)
	must(t, r.Activate(o, 1, clock.Now().Add(5*time.Second)))
	ctx := context.Background()
	a, err := r.Begin(ctx, o)
	must(t, err)
	b, err := r.libraryBegin(ctx, o)
	must(t, err)
	eq(t, r.Snapshot().Operations, 2, "inline + library begun")
	a.libraryDone()
	eq(t, r.Snapshot().Operations, 1, "inline begun, library ended")
	b.Done()
	eq(t, r.Snapshot().Operations, 0, "library begun, inline ended")
	a.Done()
	b.Done()
	eq(t, r.Snapshot().Operations, 0, "Done is idempotent")
	// The retiring end is the library's: a quiesce waiting on the last
	// scope returns once it is done inline.
	c, err := r.Begin(ctx, o)
	must(t, err)
	q := make(chan error, 1)
	go func() { q <- r.Quiesce(ctx, o) }()
	for r.ownerWord(o)&wordTransportClosed == 0 {
		runtime.Gosched()
	}
	c.Done()
	must(t, <-q)
	eq(t, r.Snapshot().Held, 0, "retired")
	eq(t, r.Snapshot().Operations, 0, "no scope")
}
