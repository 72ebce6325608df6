package coordpg

// An unknown commit is not a lost decision: the connection is cut after the
// statement was sent, and the decision must come back as the one the
// database made (resolved by its request id), exactly once.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wukongim/wkcore/go/coord"
)

// cutProxy forwards loopback TCP to the server. Armed, it cuts the next
// connection that carries a client message: before forwarding it (the
// statement never reaches the server) or after forwarding it, when the
// server's answer comes (the statement ran; its answer is lost).
type cutProxy struct {
	ln     net.Listener
	target string
	// mode: 0 forward, 1 cut before forwarding, 2 cut instead of answering
	mode atomic.Int32
	cuts atomic.Int32
	wg   sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		var cutting atomic.Bool
		cut := func() { _ = c.Close(); _ = s.Close() }
		p.wg.Add(2)
		go func() { // client -> server
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					switch p.mode.Load() {
					case 1:
						if p.mode.CompareAndSwap(1, 0) {
							p.cuts.Add(1)
							cut()
							return
						}
					case 2:
						if p.mode.CompareAndSwap(2, 0) {
							cutting.Store(true)
						}
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						cut()
						return
					}
				}
				if err != nil {
					cut()
					return
				}
			}
		}()
		go func() { // server -> client
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 && cutting.Load() {
					p.cuts.Add(1)
					cut()
					return
				}
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						cut()
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						cut()
					}
					_ = c.Close()
					return
				}
			}
		}()
	}
}

// proxied opens a store whose connections pass through a cutProxy.
func proxied(t *testing.T) (*Store, *cutProxy) {
	needPG(t)
	u, err := url.Parse(testDSN)
	if err != nil {
		t.Fatal(err)
	}
	p := newCutProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, p
}

func TestAmbiguousCommitIsResolved(t *testing.T) {
	s, p := proxied(t)
	ctx := context.Background()
	for _, mode := range []int32{1, 2} {
		c, _ := s.Counters(unique("amb"))
		if _, err := c.Get(ctx, []byte("warm")); err != nil { // a connection with its statements
			t.Fatal(err)
		}
		p.mode.Store(mode)
		v, err := c.Increment(ctx, []byte("k"))
		if err != nil || v != 1 {
			t.Fatalf("mode %d: increment %d %v, want 1", mode, v, err)
		}
		if got, _ := c.Get(ctx, []byte("k")); got != 1 {
			t.Fatalf("mode %d: the counter is %d: the increment ran %d times", mode, got, got)
		}

		l, _ := s.Ledger(unique("amb"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: 8, Retention: 10})
		if _, err := l.Insert(ctx, []byte("r"), 1, 0, coord.DeadlineNever, 1); err != nil {
			t.Fatal(err)
		}
		p.mode.Store(mode)
		d, err := l.Finalize(ctx, []byte("r"), coord.OutcomeSucceeded, 5, 2)
		if err != nil || d.Result != coord.ResultWon {
			t.Fatalf("mode %d: finalize %v %v, want won", mode, d, err)
		}
		rec, _, _ := l.Get(ctx, []byte("r"))
		if rec.Duplicates != 0 || rec.Payload != 5 {
			t.Fatalf("mode %d: record %+v", mode, rec)
		}

		a, _ := s.Anchors(unique("amb"), 4)
		_ = a.Insert(ctx, 1, 10)
		p.mode.Store(mode)
		f, err := a.TryFire(ctx, 1, 20, 5)
		if err != nil || f != (coord.Fire{Kind: coord.FireFired, Value: 10}) {
			t.Fatalf("mode %d: try_fire %v %v, want fired from 10", mode, f, err)
		}
	}
	if p.cuts.Load() != 6 {
		t.Fatalf("%d cuts, want 6", p.cuts.Load())
	}
}

// TestTerminatedSessionIsResolved ends the deciding session from another
// connection while its statement waits on a row lock the test holds, so
// the statement is cut mid-flight, deterministically.
func TestTerminatedSessionIsResolved(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	l, _ := s.Ledger(unique("term"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: 8})
	if _, err := l.Insert(ctx, []byte("r"), 1, 0, coord.DeadlineNever, 1); err != nil {
		t.Fatal(err)
	}
	holder, err := pgx.Connect(ctx, testDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE wkcoord_record SET refreshed_at = refreshed_at WHERE ledger = $1", l.name); err != nil {
		t.Fatal(err)
	}
	type res struct {
		d   coord.Decision
		err error
	}
	done := make(chan res, 1)
	go func() {
		d, err := l.Finalize(ctx, []byte("r"), coord.OutcomeFailed, 3, 2)
		done <- res{d, err}
	}()
	// Wait (bounded) for the finalize to block on the lock, then end it.
	killed := false
	for i := 0; i < 5000 && !killed; i++ {
		var n int
		if err := holder.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, s.app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		killed = n > 0
		if !killed {
			time.Sleep(time.Millisecond)
		}
	}
	if !killed {
		t.Fatal("the finalize never waited on the lock")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.d.Result != coord.ResultWon {
		t.Fatalf("finalize after its session was ended: %v %v, want won", r.d, r.err)
	}
	rec, _, _ := l.Get(ctx, []byte("r"))
	if rec.State != coord.StateFinalized || rec.Outcome != coord.OutcomeFailed || rec.Duplicates != 0 {
		t.Fatalf("record %+v", rec)
	}
}

// TestRestartIsUnavailableThenDecides stops the database: a decision is a
// typed ErrUnavailable (never a lost race), and after the restart the same
// decision is made once.
func TestRestartIsUnavailableThenDecides(t *testing.T) {
	dir := testCluster
	if dir == "" {
		dir = os.Getenv("WKCORE_PG_DIR")
	}
	s := openStore(t, Options{ResolveTimeout: time.Second})
	if dir == "" {
		t.Skip("the server was not started by this test (set WKCORE_PG_DIR to its folder to restart it)")
	}
	ctx := context.Background()
	l, _ := s.Ledger(unique("restart"), coord.LedgerConfig{Kind: coord.KindPending, Capacity: 8})
	if _, err := l.Insert(ctx, []byte("r"), 1, 0, coord.DeadlineNever, 1); err != nil {
		t.Fatal(err)
	}
	pg := filepath.Join(repoRoot(), "scripts", "pg")
	if out, err := exec.Command(pg, "stop", dir).CombinedOutput(); err != nil {
		t.Fatalf("stop: %v %s", err, out)
	}
	started := false
	defer func() {
		if !started {
			_ = exec.Command(pg, "restart", dir).Run()
		}
	}()
	_, err := l.Finalize(ctx, []byte("r"), coord.OutcomeSucceeded, 1, 2)
	var se *StoreError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &se) {
		t.Fatalf("finalize with the database down: %v, want ErrUnavailable", err)
	}
	if out, err := exec.Command(pg, "restart", dir).CombinedOutput(); err != nil {
		t.Fatalf("restart: %v %s", err, out)
	}
	started = true
	var d coord.Decision
	for i := 0; i < 50; i++ { // the pool finds its connections broken once
		if d, err = l.Finalize(ctx, []byte("r"), coord.OutcomeSucceeded, 1, 3); err == nil {
			break
		}
	}
	if err != nil || d.Result != coord.ResultWon {
		t.Fatalf("finalize after the restart: %v %v (uncertain: %v)", d, err, se != nil && se.Uncertain)
	}
}

// TestRetryWithTheSameRequestID is the host's side of an uncertain error:
// it asks again with the same request id, and a decision that had won is
// reported won again, never re-decided.
func TestRetryWithTheSameRequestID(t *testing.T) {
	s := openStore(t, Options{})
	ctx := WithRequestID(context.Background(), uint64(time.Now().UnixNano())|1)
	c, _ := s.Counters(unique("retry"))
	v1, err := c.Increment(ctx, []byte("k"))
	if err != nil || v1 != 1 {
		t.Fatalf("%d %v", v1, err)
	}
	v2, err := c.Increment(ctx, []byte("k"))
	if err != nil || v2 != 1 {
		t.Fatalf("the retry: %d %v, want 1 (the first decision)", v2, err)
	}
	if got, _ := c.Get(context.Background(), []byte("k")); got != 1 {
		t.Fatalf("the counter is %d", got)
	}
	won, err := s.Resolved(context.Background(), ctx.Value(requestKey{}).(uint64))
	if err != nil || !won {
		t.Fatalf("resolved: %v %v", won, err)
	}
}
