package mqttsession

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Many goroutines Begin/Done across owners (some asking for the operation's
// context) while another fences, quiesces and sweeps, and another samples
// Snapshot: the counts stay within their bounds, every admitted operation is
// counted until its Done, and once everything is done the registry drains
// to nothing.
func TestConcurrentBeginDoneWithFenceQuiesceSweep(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl string) {
		const owners, workers, maxOps = 16, 8, 4
		iters := 2000
		if raceEnabled || debugBuild {
			iters = 300
		}
		r, clock := ownerFixture(t, impl, owners*4, maxOps)
		var closes atomic.Int32
		closeFn := func(context.Context) error { closes.Add(1); return nil }
		var mu sync.Mutex
		live := make([]Owner, owners)
		for i := range live {
			live[i] = activeOwner(t, r, clock, "c"+string(rune('a'+i)), closeFn)
		}
		current := func(i int) Owner {
			mu.Lock()
			defer mu.Unlock()
			return live[i%owners]
		}
		var admitted, refused atomic.Int64
		stop := make(chan struct{})
		var wg, bg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				for i := 0; i < iters; i++ {
					op, err := r.Begin(ctx, current(w+i))
					if err != nil {
						switch err {
						case ErrOwnerFenced, ErrOwnerLimit:
							refused.Add(1)
							continue
						}
						if err != ErrOwnerUnknown { // a retired owner's id, replaced meanwhile
							t.Errorf("Begin: %v", err)
							return
						}
						continue
					}
					admitted.Add(1)
					if i%3 == 0 {
						_ = op.Context().Err()
					}
					_ = op.Check()
					op.Done()
					op.Done()
				}
			}(w)
		}
		bg.Add(2)
		go func() { // the fencer
			defer bg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := current(i)
				switch i % 3 {
				case 0:
					_ = r.Fence(o)
				case 1:
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					_ = r.Quiesce(ctx, o)
					cancel()
				default:
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					_, _ = r.Sweep(ctx, 4)
					cancel()
				}
				// Replace a fenced owner with a fresh one, as a reconnect would.
				n, err := r.Reserve(ownerClaim("n"), closeFn)
				if err == nil {
					if r.Activate(n, 1, clock.Now().Add(5*time.Second)) == nil {
						mu.Lock()
						live[i%owners] = n
						mu.Unlock()
					}
				}
				time.Sleep(50 * time.Microsecond)
			}
		}()
		go func() { // the sampler
			defer bg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := r.Snapshot()
				if s.Operations < 0 || s.Operations > s.Held*maxOps || s.Held > owners*4 ||
					s.Pending+s.Active+s.Closing != s.Held || s.Deadlines != s.Held {
					t.Errorf("snapshot out of bounds: %+v", s)
					return
				}
				time.Sleep(20 * time.Microsecond)
			}
		}()
		wg.Wait()
		close(stop)
		bg.Wait()
		eq(t, r.Snapshot().Operations, 0, "operations after every Done")
		must(t, r.Close(context.Background()))
		s := r.Snapshot()
		eq(t, s, OwnerSnapshot{Stopped: true}, "drained")
		if admitted.Load() == 0 {
			t.Fatal("nothing admitted")
		}
		t.Logf("admitted %d, refused %d, closes %d", admitted.Load(), refused.Load(), closes.Load())
	})
}
