package coordpg

// The replicas harness: N = 2, 4 and 8 processes (this test binary,
// re-executed as a replica) run a mixed workload on one database: a
// scheduler of 50 cron triggers (10 new ones, their anchor unset, each tick
// until all exist), receipts delivered to every replica (late duplicates
// refused; every fourth left unacknowledged, timed out by the reconciler,
// its late acknowledgements refused), exclusive builds, flips with one
// alert each, token rotations, login failures in a shared window, and
// runner-marked jobs with heartbeats. Replica 0 kills itself with SIGKILL
// at the worst moment (its decision committed, not yet logged) and is
// restarted (its finalize-own fails only its own jobs); the harness kills
// replica N-1 from outside at a random moment, sweeps the runners gone
// quiet (only that replica's unfinished jobs become orphaned) and restarts
// it; PostgreSQL is restarted once (in the N=2 run). Each replica logs
// "try" with the request id before a decision and "won"/"lost" after it; a
// restarted replica resolves its unfinished tries by request id. The union
// of the logs, checked against the database, must show 0 duplicates
// executed and 0 decisions lost.
//
//   go test -run TestReplicas -replicas.ticks=500   # a longer run

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wukongim/wkcore/go/coord"
)

var replicaTicks = flag.Int("replicas.ticks", 24, "ticks (periods) each replica of TestReplicas runs")

// replicaTriggers is the number of cron triggers the replicas schedule.
const replicaTriggers = 50

// replica is one replica process's state.
type replica struct {
	ctx    context.Context
	s      *Store
	id     int
	log    *os.File
	killAt int
	n      int
	tick   int
	done   map[string]bool // keys this replica decided in an earlier life
	start  int             // the tick it resumes at
}

func (r *replica) logf(format string, args ...any) {
	if _, err := r.log.WriteString(fmt.Sprintf(format, args...) + "\n"); err != nil {
		panic(err)
	}
}

// retry runs f until it returns no store error (the database may be
// restarting), for at most a minute.
func retry[T any](f func() (T, error)) (T, error) {
	var v T
	var err error
	for i := 0; i < 600; i++ {
		v, err = f()
		var se *StoreError
		if !errors.As(err, &se) {
			return v, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return v, err
}

// do makes one logged decision: "try RID KEY", the decision (retried with
// the same request id while the store errs), then "won RID KEY" or "lost
// RID". kill: this decision is where the replica SIGKILLs itself, after
// the decision and before its log line.
func (r *replica) do(key string, kill bool, f func(ctx context.Context) (bool, error)) bool {
	if r.done[key] { // decided before this replica was killed: the host does not redo it
		return false
	}
	rid := rand.Uint64() | 1
	r.logf("try %d %s", rid, key)
	ctx := WithRequestID(r.ctx, rid)
	won, err := retry(func() (bool, error) { return f(ctx) })
	if err != nil {
		panic(fmt.Sprintf("replica %d: %s: %v", r.id, key, err))
	}
	if (kill || (r.killAt > 0 && r.tick >= r.killAt)) && won {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if won {
		r.logf("won %d %s", rid, key)
	} else {
		r.logf("lost %d", rid)
	}
	return won
}

// recover resolves the tries of an earlier life that have no outcome.
func (r *replica) recover(path string, triggers coord.TriggerStore) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	open := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch w[0] {
		case "tick":
			r.start, _ = strconv.Atoi(w[1])
		case "try":
			open[w[1]] = w[2]
			r.done[w[2]] = true
		case "won", "lost":
			delete(open, w[1])
		}
	}
	for rid, key := range open {
		id, _ := strconv.ParseUint(rid, 10, 64)
		won, err := retry(func() (bool, error) { return r.s.Resolved(r.ctx, id) })
		if err != nil {
			panic(err)
		}
		if !won { // never decided (or lost): deciding it again is safe, each decision being conditional
			r.logf("lost %s", rid)
			delete(r.done, key)
			continue
		}
		if strings.HasPrefix(key, "build:?") { // the run it started: finish it (the restart's clean-up)
			run, _ := retry(func() (uint64, error) { return triggers.Active(r.ctx, []byte("b")) })
			key = fmt.Sprintf("build:%d", run)
			if run != 0 {
				_, _ = retry(func() (bool, error) { return triggers.Finish(r.ctx, []byte("b"), run) })
			}
		}
		r.logf("won %s %s recovered", rid, key)
	}
}

func replicaMain() int {
	env := func(k string) string { return os.Getenv("WKCOORD_REPLICA_" + k) }
	atoi := func(k string) int { n, _ := strconv.Atoi(env(k)); return n }
	ctx := context.Background()
	s, err := retry(func() (*Store, error) { return Open(ctx, env("DSN"), Options{ResolveTimeout: 30 * time.Second}) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	defer s.Close()
	ns := env("NS")
	path := env("LOG")
	r := &replica{ctx: ctx, s: s, id: atoi("ID"), killAt: atoi("KILL_AT"), n: atoi("N"), done: map[string]bool{}, start: 1}
	anchors, _ := s.Anchors(ns, replicaTriggers)
	receipts, _ := s.Ledger(ns+"-receipts", coord.LedgerConfig{Kind: coord.KindPending, Capacity: 1 << 16, Retention: 1000})
	tokens, _ := s.Ledger(ns+"-tokens", coord.LedgerConfig{Kind: coord.KindPending, Capacity: 1 << 16})
	jobs, _ := s.Ledger(ns+"-jobs", coord.LedgerConfig{Kind: coord.KindPending, Capacity: 1 << 16})
	flips, _ := s.Flips(ns, 0)
	triggers, _ := s.Triggers(ns)
	windows, _ := s.Windows(ns)
	r.log, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	r.recover(path, triggers)
	runner := uint64(r.id + 1)
	// A restarting runner finalizes its own leftovers only.
	if _, err := retry(func() (coord.Page, error) { return jobs.FinalizeOwn(ctx, runner, coord.OutcomeFailed, 1, 1<<20) }); err != nil {
		panic(err)
	}
	ticks := atoi("TICKS")
	for t := max(r.start, 1); t <= ticks; t++ {
		r.logf("tick %d", t)
		r.tick = t
		now := uint64(t) * 10
		if t == atoi("PAUSE_AT") {
			_ = os.WriteFile(env("AT_FILE"), nil, 0o644)
			for i := 0; i < 1200; i++ {
				if _, err := os.Stat(env("PAUSE_FILE")); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		// The scheduler: replicaTriggers cron triggers, 10 new ones (their
		// anchor unset) each tick until all exist; each fires once per
		// period, on one replica.
		for id := uint64(10*(t-1) + 1); id <= min(uint64(10*t), replicaTriggers); id++ {
			if _, err := retry(func() (struct{}, error) {
				err := anchors.Insert(ctx, id, coord.TimeUnset)
				if errors.Is(err, coord.ErrAlreadyExists) {
					err = nil
				}
				return struct{}{}, err
			}); err != nil {
				panic(err)
			}
		}
		for id := uint64(1); id <= min(uint64(10*t), replicaTriggers); id++ {
			r.do(fmt.Sprintf("anchor:%d:%d", id, now), false, func(ctx context.Context) (bool, error) {
				f, err := anchors.TryFire(ctx, id, now, 10)
				return f.Kind == coord.FireFired || f.Kind == coord.FireAnchoredFirstSeen, err
			})
		}
		// A receipt arrives at every replica; one finalization wins; a late
		// duplicate of the previous one is refused. Every fourth receipt is
		// not acknowledged in its tick: the reconciler times it out at the
		// next, and the late acknowledgements are refused.
		rk := []byte(fmt.Sprintf("rcpt:%d", t))
		deadline := uint64(coord.DeadlineNever)
		unacked := t%4 == 0 && t < ticks
		if unacked {
			deadline = now + 5
		}
		r.do("ins:"+string(rk), false, func(ctx context.Context) (bool, error) {
			d, err := receipts.Insert(ctx, rk, uint64(t), 0, deadline, now)
			return d.Won(), err
		})
		if !unacked {
			r.do("fin:"+string(rk), t == r.killAt, func(ctx context.Context) (bool, error) {
				d, err := receipts.Finalize(ctx, rk, coord.OutcomeSucceeded, uint64(r.id), now)
				return d.Won(), err
			})
		}
		if _, err := retry(func() (coord.Page, error) { return receipts.Reconcile(ctx, now, 64) }); err != nil {
			panic(err)
		}
		if t > 1 {
			late := []byte(fmt.Sprintf("rcpt:%d", t-1))
			r.do("fin:"+string(late), false, func(ctx context.Context) (bool, error) {
				d, err := receipts.Finalize(ctx, late, coord.OutcomeFailed, uint64(r.id), now)
				return d.Won(), err
			})
		}
		// An exclusive build, finished at once by the replica that started it.
		var run, holder uint64
		if r.do(fmt.Sprintf("build:?:%d", t), false, func(ctx context.Context) (bool, error) {
			var err error
			run, err = triggers.Trigger(ctx, []byte("b"))
			var busy coord.BusyError
			if errors.As(err, &busy) {
				holder = busy.Run
				return false, nil
			}
			return err == nil, err
		}) {
			r.logf("run %d", run)
			r.do(fmt.Sprintf("finish:%d", run), false, func(ctx context.Context) (bool, error) {
				return triggers.Finish(ctx, []byte("b"), run)
			})
		} else if holder != 0 {
			r.logf("busy %d", holder) // told which run holds the trigger
		}
		// A node goes offline: one alert.
		r.do(fmt.Sprintf("alert:%d", t), false, func(ctx context.Context) (bool, error) {
			return flips.Flip(ctx, []byte(fmt.Sprintf("node:%d", t)), 0, 1)
		})
		// A token pair is issued once (by one replica) and every replica
		// tries to rotate it: one rotation wins.
		tk := []byte(fmt.Sprintf("tok:%d", t))
		if t%r.n == r.id {
			r.do("tokins:"+string(tk), false, func(ctx context.Context) (bool, error) {
				d, err := tokens.Insert(ctx, tk, uint64(t), 0, coord.DeadlineNever, now)
				return d.Won(), err
			})
		}
		r.do("rot:"+string(tk), false, func(ctx context.Context) (bool, error) {
			d, err := tokens.Take(ctx, tk, uint64(t))
			return d.Won(), err
		})
		// A login failure, counted in a window shared by every replica.
		if _, err := retry(func() (uint32, error) { return windows.Increment(ctx, []byte("user"), now, 50) }); err != nil {
			panic(err)
		}
		// Runner marks: a job of this runner, finished at the next tick.
		jk := []byte(fmt.Sprintf("job:%d:%d", r.id, t))
		r.do("job:"+string(jk), false, func(ctx context.Context) (bool, error) {
			d, err := jobs.Insert(ctx, jk, 1, runner, coord.DeadlineNever, now)
			return d.Won(), err
		})
		if t > 1 {
			pk := []byte(fmt.Sprintf("job:%d:%d", r.id, t-1))
			// The runner's heartbeat (idempotent: no request id, not logged).
			if _, err := retry(func() (coord.Decision, error) { return jobs.Touch(ctx, pk, runner, now) }); err != nil {
				panic(err)
			}
			r.do("jobdone:"+string(pk), false, func(ctx context.Context) (bool, error) {
				d, err := jobs.Finalize(ctx, pk, coord.OutcomeSucceeded, 0, now)
				return d.Won(), err
			})
		}
		if t == atoi("HOLD_AT") {
			_ = os.WriteFile(env("HOLD_FILE"), nil, 0o644)
		}
	}
	// The replica the harness kills from outside waits here, its last job
	// still pending, so that the kill lands before its run ends.
	if atoi("HOLD_AT") > 0 {
		for i := 0; i < 1200; i++ {
			if _, err := os.Stat(env("HOLD_FILE") + ".release"); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	last := []byte(fmt.Sprintf("job:%d:%d", r.id, ticks))
	r.do("jobdone:"+string(last), false, func(ctx context.Context) (bool, error) {
		d, err := jobs.Finalize(ctx, last, coord.OutcomeSucceeded, 0, uint64(ticks)*10)
		return d.Won(), err
	})
	return 0
}

func TestReplicas(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) { replicasRun(t, n, *replicaTicks) })
	}
}

func replicasRun(t *testing.T, n, ticks int) {
	s := openStore(t, Options{})
	dir := t.TempDir()
	ns := unique("rep")
	clusterDir := testCluster
	if clusterDir == "" {
		clusterDir = os.Getenv("WKCORE_PG_DIR")
	}
	restartAt := 0
	if clusterDir != "" && n == 2 { // the database restarts once, in the N=2 run
		restartAt = ticks / 2
	}
	killAt := max(ticks/3, 1)
	// The replica killed from outside: at a random moment after it reached
	// a random tick, its work of that moment unfinished.
	target := n - 1
	holdAt := 2 + rand.IntN(max(ticks-2, 1))
	holdFile := filepath.Join(dir, "hold")
	start := func(id int, kill, hold bool) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			"WKCOORD_REPLICA=1",
			"WKCOORD_REPLICA_DSN="+testDSN,
			"WKCOORD_REPLICA_NS="+ns,
			"WKCOORD_REPLICA_ID="+strconv.Itoa(id),
			"WKCOORD_REPLICA_N="+strconv.Itoa(n),
			"WKCOORD_REPLICA_TICKS="+strconv.Itoa(ticks),
			"WKCOORD_REPLICA_LOG="+filepath.Join(dir, fmt.Sprintf("replica%d.log", id)),
			"WKCOORD_REPLICA_AT_FILE="+filepath.Join(dir, "at-half"),
			"WKCOORD_REPLICA_PAUSE_FILE="+filepath.Join(dir, "restarted"))
		if kill {
			cmd.Env = append(cmd.Env, "WKCOORD_REPLICA_KILL_AT="+strconv.Itoa(killAt))
		}
		if hold {
			cmd.Env = append(cmd.Env, "WKCOORD_REPLICA_HOLD_AT="+strconv.Itoa(holdAt), "WKCOORD_REPLICA_HOLD_FILE="+holdFile)
		}
		if id == 1 && restartAt > 0 {
			cmd.Env = append(cmd.Env, "WKCOORD_REPLICA_PAUSE_AT="+strconv.Itoa(restartAt))
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = start(i, i == 0, i == target)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "restarted"), nil, 0o644)
		_ = os.WriteFile(holdFile+".release", nil, 0o644)
		for _, c := range cmds {
			if c.ProcessState == nil {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		}
	})
	restarted := make(chan error, 1)
	if restartAt > 0 {
		go func() {
			for i := 0; i < 2400; i++ {
				if _, err := os.Stat(filepath.Join(dir, "at-half")); err == nil {
					out, err := exec.Command(filepath.Join(repoRoot(), "scripts", "pg"), "restart", clusterDir).CombinedOutput()
					if err != nil {
						err = fmt.Errorf("%v: %s", err, out)
					}
					_ = os.WriteFile(filepath.Join(dir, "restarted"), nil, 0o644)
					restarted <- err
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
			_ = os.WriteFile(filepath.Join(dir, "restarted"), nil, 0o644)
			restarted <- errors.New("replica 1 never reached the restart tick")
		}()
	}
	// The outside kill: once the target has reached its tick, after a
	// random pause (its run holds at its end, so the kill always lands).
	killed := make(chan error, 1)
	go func() {
		for i := 0; i < 2400; i++ {
			if _, err := os.Stat(holdFile); err == nil {
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				_ = cmds[target].Process.Signal(syscall.SIGKILL)
				killed <- nil
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		killed <- fmt.Errorf("replica %d never reached tick %d", target, holdAt)
	}()
	diedByKill := func(id int, err error) {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("replica %d did not die by SIGKILL: %v", id, err)
		}
	}
	// Replica 0 kills itself at the worst moment; restart it once.
	diedByKill(0, cmds[0].Wait())
	cmds[0] = start(0, false, false)
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	diedByKill(target, cmds[target].Wait())
	for i, c := range cmds {
		if i == target {
			continue
		}
		if err := c.Wait(); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	// The target is gone quiet with its work unfinished; every other
	// runner finished its own. A sweep of runners quiet for 50 marks the
	// target's pending jobs orphaned and touches nothing else.
	ctx := context.Background()
	jobs, err := s.Ledger(ns+"-jobs", coord.LedgerConfig{Kind: coord.KindPending, Capacity: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	receipts, err := s.Ledger(ns+"-receipts", coord.LedgerConfig{Kind: coord.KindPending, Capacity: 1 << 16, Retention: 1000})
	if err != nil {
		t.Fatal(err)
	}
	pendingOfTarget := 0
	for tk := 1; tk <= ticks; tk++ {
		rec, ok, err := jobs.Get(ctx, []byte(fmt.Sprintf("job:%d:%d", target, tk)))
		if err != nil {
			t.Fatal(err)
		}
		if ok && rec.State != coord.StateFinalized {
			pendingOfTarget++
		}
	}
	page, err := jobs.SweepOrphans(ctx, uint64(ticks+100)*10, 50, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if pendingOfTarget == 0 || page.Changed != pendingOfTarget {
		t.Fatalf("the orphan sweep changed %d records; the killed runner had %d pending", page.Changed, pendingOfTarget)
	}
	_ = os.WriteFile(holdFile+".release", nil, 0o644)
	cmds[target] = start(target, false, false)
	if err := cmds[target].Wait(); err != nil {
		t.Fatalf("replica %d (restarted): %v", target, err)
	}
	// Every job: finished by its runner, failed by its own runner's restart
	// (replica 0's finalize-own), or orphaned by the sweep (the target's).
	orphaned := 0
	for id := 0; id < n; id++ {
		for tk := 1; tk <= ticks; tk++ {
			rec, ok, err := jobs.Get(ctx, []byte(fmt.Sprintf("job:%d:%d", id, tk)))
			if err != nil {
				t.Fatal(err)
			}
			if !ok || rec.State != coord.StateFinalized {
				t.Fatalf("job %d:%d: %+v (found %v), want finalized", id, tk, rec, ok)
			}
			if rec.Runner != uint64(id+1) {
				t.Fatalf("job %d:%d has runner %d", id, tk, rec.Runner)
			}
			switch rec.Outcome {
			case coord.OutcomeSucceeded:
			case coord.OutcomeFailed:
				if id != 0 {
					t.Errorf("job %d:%d failed by a finalize-own of another runner", id, tk)
				}
			case coord.OutcomeOrphaned:
				orphaned++
				if id != target {
					t.Errorf("job %d:%d orphaned, but its runner never went quiet", id, tk)
				}
			default:
				t.Errorf("job %d:%d: outcome %d", id, tk, rec.Outcome)
			}
		}
	}
	if orphaned != pendingOfTarget {
		t.Errorf("%d jobs orphaned, the sweep changed %d", orphaned, pendingOfTarget)
	}
	if restartAt > 0 {
		if err := <-restarted; err != nil {
			t.Fatalf("the database restart: %v", err)
		}
	}
	// The union of the logs.
	wins := map[string]int{}
	outcome := map[uint64]bool{}
	tried := 0
	recovered := 0
	var told []string
	for i := 0; i < n; i++ {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("replica%d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			w := strings.Fields(sc.Text())
			rid, _ := strconv.ParseUint(w[1], 10, 64)
			switch w[0] {
			case "won":
				outcome[rid] = true
				if strings.HasPrefix(w[2], "build:?") {
					continue // the run number follows on the "run" line
				}
				wins[w[2]]++
				if len(w) > 3 {
					recovered++
				}
			case "run":
				wins["build:"+w[1]]++
			case "busy":
				told = append(told, w[1])
			case "try":
				tried++
			case "lost":
				outcome[rid] = false
			}
		}
		f.Close()
	}
	if len(outcome) != tried {
		t.Fatalf("%d tries, %d outcomes", tried, len(outcome))
	}
	lost, phantom, prevented := 0, 0, 0
	for rid, won := range outcome {
		dbWon, err := s.Resolved(ctx, rid)
		if err != nil {
			t.Fatal(err)
		}
		if dbWon && !won {
			lost++
		}
		if won && !dbWon {
			phantom++
		}
		if !won {
			prevented++
		}
	}
	dups := 0
	for k, c := range wins {
		if c > 1 {
			dups++
			t.Errorf("%s executed %d times", k, c)
		}
	}
	for tk := 1; tk <= ticks; tk++ {
		for _, k := range []string{"rot:tok:%d", "alert:%d", "ins:rcpt:%d", "tokins:tok:%d"} {
			if key := fmt.Sprintf(k, tk); wins[key] != 1 {
				t.Errorf("%s won %d times, want once", key, wins[key])
			}
		}
		// A receipt is finalized once: acknowledged, or (every fourth)
		// timed out by the reconciler with every late acknowledgement
		// refused as a duplicate.
		want, outcome := 1, coord.OutcomeSucceeded
		if tk%4 == 0 && tk < ticks {
			want, outcome = 0, coord.OutcomeTimedOut
		}
		key := fmt.Sprintf("fin:rcpt:%d", tk)
		if wins[key] != want {
			t.Errorf("%s won %d times, want %d", key, wins[key], want)
		}
		rec, ok, err := receipts.Get(ctx, []byte(fmt.Sprintf("rcpt:%d", tk)))
		if err != nil {
			t.Fatal(err)
		}
		if !ok || rec.State != coord.StateFinalized || rec.Outcome != outcome {
			t.Errorf("receipt %d: %+v, want finalized %v", tk, rec, outcome)
		}
		if tk < ticks && rec.Duplicates == 0 {
			t.Errorf("receipt %d: its late acknowledgements were not told they were duplicates", tk)
		}
		// Every trigger fired once per period from the tick it appeared
		// (its first-seen period) on: none missed, none twice.
		for id := 1; id <= replicaTriggers; id++ {
			if first := (id-1)/10 + 1; tk >= first {
				if key := fmt.Sprintf("anchor:%d:%d", id, tk*10); wins[key] != 1 {
					t.Errorf("%s won %d times, want once", key, wins[key])
				}
			}
		}
	}
	for _, run := range told {
		if wins["build:"+run] != 1 {
			t.Errorf("a trigger was told run %s holds the build, which started %d times", run, wins["build:"+run])
		}
	}
	if recovered == 0 {
		t.Errorf("the killed replica recovered no decision")
	}
	if lost != 0 || phantom != 0 || dups != 0 {
		t.Fatalf("lost %d, phantom %d, duplicates %d", lost, phantom, dups)
	}
	t.Logf("n=%d ticks=%d: %d decisions, %d won, %d duplicates prevented, %d recovered after SIGKILL, "+
		"%d jobs orphaned (killed from outside after tick %d), %d triggers told the run that held the build, "+
		"database restarted: %v; 0 duplicates executed, 0 decisions lost",
		n, ticks, tried, len(wins), prevented, recovered, orphaned, holdAt, len(told), restartAt > 0)
}
