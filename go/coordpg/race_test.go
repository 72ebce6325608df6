package coordpg

// Replicas racing on one database: each goroutine has its own Store (its
// own pool, as a replica would), and every transition must have exactly one
// winner, the losers told what won.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wukongim/wkcore/go/coord"
)

const racers = 4

func TestReplicasRaceOneWinner(t *testing.T) {
	needPG(t)
	stores := make([]*Store, racers)
	for i := range stores {
		stores[i] = openStore(t, Options{})
	}
	ctx := context.Background()
	ledger, anchors, flips, triggers, counters := unique("race"), unique("race"), unique("race"), unique("race"), unique("race")
	const rounds = 20
	for round := 0; round < rounds; round++ {
		key := []byte(fmt.Sprintf("r%d", round))
		l0, _ := stores[0].Ledger(ledger, coord.LedgerConfig{Kind: coord.KindClaim, Capacity: 64})
		if _, err := l0.Insert(ctx, key, 7, 0, coord.DeadlineNever, 1); err != nil {
			t.Fatal(err)
		}
		a0, _ := stores[0].Anchors(anchors, 64)
		if err := a0.Insert(ctx, uint64(round), coord.TimeUnset); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		wins := map[string]int{}
		var outcomes []coord.Outcome
		var busy []uint64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				s := stores[i]
				l, _ := s.Ledger(ledger, coord.LedgerConfig{Kind: coord.KindClaim, Capacity: 64})
				a, _ := s.Anchors(anchors, 64)
				f, _ := s.Flips(flips, 0)
				tr, _ := s.Triggers(triggers)
				<-start
				won := func(name string, ok bool) {
					if ok {
						mu.Lock()
						wins[name]++
						mu.Unlock()
					}
				}
				d, err := l.Claim(ctx, key, 7, uint64(100+i), uint64(i+1), 2)
				if err != nil {
					t.Error(err)
					return
				}
				won("claim", d.Won())
				if !d.Won() && d.Result != coord.ResultLost && d.Result != coord.ResultDuplicate {
					t.Errorf("claim loser told %v", d)
				}
				d, err = l.Finalize(ctx, key, coord.Outcome(256+i), 0, 3)
				if err != nil {
					t.Error(err)
					return
				}
				won("finalize", d.Won())
				mu.Lock()
				outcomes = append(outcomes, d.Outcome)
				mu.Unlock()
				fire, err := a.TryFire(ctx, uint64(round), 10, 5)
				if err != nil {
					t.Error(err)
					return
				}
				won("first_seen", fire.Kind == coord.FireAnchoredFirstSeen)
				fire, err = a.TryFire(ctx, uint64(round), 15, 5)
				if err != nil {
					t.Error(err)
					return
				}
				won("fired", fire.Kind == coord.FireFired)
				ok, err := f.Flip(ctx, key, 0, 1)
				if err != nil {
					t.Error(err)
					return
				}
				won("flip", ok)
				run, err := tr.Trigger(ctx, key)
				var be coord.BusyError
				switch {
				case err == nil:
					won("trigger", true)
				case errors.As(err, &be):
					mu.Lock()
					busy = append(busy, be.Run)
					mu.Unlock()
				default:
					t.Error(err)
				}
				_ = run
				dt, err := l.Take(ctx, key, 0)
				if err != nil || dt.Won() {
					t.Errorf("take of a finalized record: %v %v", dt, err)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		for _, name := range []string{"claim", "finalize", "first_seen", "fired", "flip", "trigger"} {
			if wins[name] != 1 {
				t.Fatalf("round %d: %s won %d times, want once", round, name, wins[name])
			}
		}
		for _, o := range outcomes[1:] {
			if o != outcomes[0] {
				t.Fatalf("round %d: losers told different outcomes %v", round, outcomes)
			}
		}
		for _, b := range busy {
			if b != 1 {
				t.Fatalf("round %d: busy with run %d, want 1", round, b)
			}
		}
	}
	// Counters: racers x M increments, every value unique, the sum exact.
	const m = 50
	seen := make(chan uint64, racers*m)
	var wg sync.WaitGroup
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, _ := stores[i].Counters(counters)
			for j := 0; j < m; j++ {
				v, err := c.Increment(ctx, []byte("hits"))
				if err != nil {
					t.Error(err)
					return
				}
				seen <- v
			}
		}(i)
	}
	wg.Wait()
	close(seen)
	got := map[uint64]bool{}
	for v := range seen {
		if got[v] {
			t.Fatalf("value %d returned twice", v)
		}
		got[v] = true
	}
	c, _ := stores[0].Counters(counters)
	if v, _ := c.Get(ctx, []byte("hits")); v != racers*m || len(got) != racers*m {
		t.Fatalf("counter %d, %d values, want %d", v, len(got), racers*m)
	}
}

// TestMigrationConcurrent opens N stores at once on fresh databases, round
// after round: every one succeeds (the migration is idempotent and
// serialized), and a schema newer than the driver is a typed
// ErrSchemaMismatch. Found beside a CPU hog: two migrations creating the
// version table at once could fail in the catalog ("type wkcoord_schema
// already exists"), which no retry covered; the migration lock rules it out.
func TestMigrationConcurrent(t *testing.T) {
	needPG(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	const rounds, openers = 8, 8
	var dsn string
	for round := 0; round < rounds; round++ {
		db := strings.ReplaceAll(unique("mig"), "-", "_")
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(testDSN)
		u.Path = "/" + db
		dsn = u.String()
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, openers)
		for i := 0; i < openers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				s, err := Open(context.Background(), dsn, Options{})
				if err == nil {
					s.Close()
				}
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "UPDATE wkcoord_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dsn, Options{}); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("a newer schema: %v, want ErrSchemaMismatch", err)
	}
}
