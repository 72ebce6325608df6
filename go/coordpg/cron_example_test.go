package coordpg

// The worked example of docs/COORD.md ("a cron scheduler from one process to
// three replicas"), run: the same scheduler function over the in-memory
// anchors in one process, then over the database with three replicas (each
// its own Store, as three processes would have), on a logical clock. Every
// period of every job fires exactly once in both, and the same periods fire.

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/wukongim/wkcore/go/coord"
)

type cronJob struct {
	ID       uint64
	PeriodMS uint64
}

// runCron is the example's loop, for the ticks given: it fires each due job
// and reports the periods this replica won.
func runCron(ctx context.Context, anchors coord.AnchorStore, jobs []cronJob, ticks []uint64, run func(job cronJob, now uint64)) error {
	for _, job := range jobs {
		if err := anchors.Insert(ctx, job.ID, coord.TimeUnset); err != nil && err != coord.ErrAlreadyExists {
			return err
		}
	}
	for _, now := range ticks {
		for _, job := range jobs {
			f, err := anchors.TryFire(ctx, job.ID, now, job.PeriodMS)
			switch {
			case err != nil:
				return err
			case f.Kind == coord.FireFired:
				run(job, now)
			}
		}
	}
	return nil
}

func TestCronSchedulerOneProcessToThreeReplicas(t *testing.T) {
	ctx := context.Background()
	jobs := []cronJob{{1, 1000}, {2, 2000}, {3, 5000}}
	var ticks []uint64
	for ms := uint64(10_000); ms <= 40_000; ms += 500 {
		ticks = append(ticks, ms)
	}
	type fired struct {
		sync.Mutex
		n map[string]int
	}
	record := func(f *fired) func(cronJob, uint64) {
		return func(job cronJob, now uint64) {
			f.Lock()
			defer f.Unlock()
			f.n[fmt.Sprintf("%d@%d", job.ID, now)]++
		}
	}

	// One process: the anchors live in memory.
	table, err := coord.NewAnchorTable(1024)
	if err != nil {
		t.Fatal(err)
	}
	one := &fired{n: map[string]int{}}
	if err := runCron(ctx, coord.MemoryAnchors(table), jobs, ticks, record(one)); err != nil {
		t.Fatal(err)
	}

	// Three replicas: the same function; only the constructor differs.
	needPG(t)
	name := unique("cron")
	three := &fired{n: map[string]int{}}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		store := openStore(t, Options{})
		anchors, err := store.Anchors(name, 1024)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runCron(ctx, anchors, jobs, ticks, record(three))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(one.n) == 0 {
		t.Fatal("nothing fired")
	}
	for k, c := range three.n {
		if c != 1 {
			t.Errorf("%s fired %d times on three replicas", k, c)
		}
	}
	for k, c := range one.n {
		if c != 1 || three.n[k] != 1 {
			t.Errorf("%s: fired %d times in one process, %d on three replicas", k, c, three.n[k])
		}
	}
	if len(one.n) != len(three.n) {
		t.Errorf("%d periods fired in one process, %d on three replicas", len(one.n), len(three.n))
	}
}
