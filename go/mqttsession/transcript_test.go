package mqttsession

// One script of the public API on a logical clock, written as a transcript
// and compared with testdata/go/mqttsession.txt: both builds must write the
// same bytes (WK_UPDATE_TRANSCRIPT=1 rewrites the file; scripts/go-test runs
// the test in both builds, so a difference between them fails one).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

type transcript struct{ b strings.Builder }

func (w *transcript) line(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return err.Error()
}

func compareTranscript(t *testing.T, name, got string) {
	t.Helper()
	path := "../../testdata/go/" + name
	if os.Getenv("WK_UPDATE_TRANSCRIPT") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s build: transcript line %d:\n got  %q\n want %q", Implementation, i+1, g, w)
			}
		}
	}
}

func TestTranscript(t *testing.T) {
	w := &transcript{}
	clock := newFakeClock()
	ctx := context.Background()
	r, err := NewOwners(fixtureOptions(clock, 3, 2))
	w.line("NewOwners: %s", outcome(err))
	snap := func() { w.line("  snapshot %+v", r.Snapshot()) }
	_, err = NewOwners(OwnerOptions{})
	w.line("NewOwners(zero): %s", outcome(err))

	calls := map[string]int{}
	closer := func(name string, fail int) CloseTransport {
		return func(context.Context) error {
			calls[name]++
			if calls[name] <= fail {
				return errors.New("private")
			}
			return nil
		}
	}
	a, err := r.Reserve(ownerClaim("a"), closer("a", 0))
	w.line("Reserve a: id %d %s", a.ConnectionID, outcome(err))
	b, err := r.Reserve(ownerClaim("b"), closer("b", 1))
	w.line("Reserve b: id %d %s", b.ConnectionID, outcome(err))
	_, err = r.Reserve(Claim{}, okClose)
	w.line("Reserve bad claim: %s", outcome(err))
	snap()
	_, err = r.Begin(ctx, a)
	w.line("Begin a pending: %s", outcome(err))
	until := clock.Now().Add(5 * time.Second)
	w.line("Activate a: %s", outcome(r.Activate(a, 1, until)))
	w.line("Activate a again (exact): %s", outcome(r.Activate(a, 1, until)))
	w.line("Activate a other until: %s", outcome(r.Activate(a, 1, until.Add(time.Second))))
	w.line("Activate a beyond MaxLease: %s", outcome(r.Activate(a, 2, clock.Now().Add(time.Hour))))
	op1, err := r.Begin(ctx, a)
	w.line("Begin a: %s uid %q", outcome(err), op1.UID())
	op2, err := r.Begin(ctx, a)
	w.line("Begin a: %s", outcome(err))
	_, err = r.Begin(ctx, a)
	w.line("Begin a third: %s", outcome(err))
	w.line("Check op1: %s", outcome(op1.Check()))
	snap()
	w.line("Renew a same rev: %s", outcome(r.Renew(a, 1, until.Add(time.Second))))
	w.line("Renew a rev 2: %s", outcome(r.Renew(a, 2, until.Add(2*time.Second))))
	op2.Done()
	op2.Done()
	w.line("Done op2 twice; Check op2: %s", outcome(op2.Check()))
	bad := a
	bad.ConnectionID = 99
	w.line("Quiesce unissued: %s", outcome(r.Quiesce(ctx, bad)))
	bad = a
	bad.BootID = "old"
	w.line("Fence other boot: %s", outcome(r.Fence(bad)))
	w.line("Fence a: %s", outcome(r.Fence(a)))
	w.line("Check op1 after fence: %s ctx %s", outcome(op1.Check()), outcome(op1.Context().Err()))
	_, err = r.Begin(ctx, a)
	w.line("Begin a fenced: %s", outcome(err))
	snap()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	w.line("Quiesce a cancelled ctx: %s", outcome(r.Quiesce(cctx, a)))
	op1.Done()
	w.line("Quiesce a: %s", outcome(r.Quiesce(ctx, a)))
	w.line("  closes of a: %d", calls["a"])
	w.line("Quiesce a retired: %s", outcome(r.Quiesce(ctx, a)))
	snap()
	clock.Add(2 * time.Second)
	n, err := r.Sweep(ctx, 256)
	w.line("Sweep (b pending expired, close fails): %d %s closes %d", n, outcome(err), calls["b"])
	snap()
	n, err = r.Sweep(ctx, 256)
	w.line("Sweep again (retry not due): %d %s", n, outcome(err))
	clock.Add(2 * time.Second)
	n, err = r.Sweep(ctx, 256)
	w.line("Sweep after CloseRetry: %d %s closes %d", n, outcome(err), calls["b"])
	_, err = r.Sweep(ctx, 257)
	w.line("Sweep 257: %s", outcome(err))
	snap()
	c, err := r.Reserve(ownerClaim("c"), okClose)
	w.line("Reserve c: id %d %s", c.ConnectionID, outcome(err))
	w.line("Activate c: %s", outcome(r.Activate(c, 1, clock.Now().Add(time.Second))))
	op3, _ := r.Begin(ctx, c)
	w.line("MarkUncertain: %s %s", outcome(op3.MarkUncertain()), outcome(op3.MarkUncertain()))
	op3.Done()
	w.line("Quiesce uncertain: %s", outcome(r.Quiesce(ctx, c)))
	_, err = r.Retirement()
	w.line("Retirement running: %s", outcome(err))
	w.line("Close: %s", outcome(r.Close(ctx)))
	snap()
	_, err = r.Reserve(ownerClaim("d"), okClose)
	w.line("Reserve after Close: %s", outcome(err))
	_, err = r.Retirement()
	w.line("Retirement with an uncertain owner: %s", outcome(err))
	iso := Isolation{Owners: r}
	other := c
	other.BootID = "older"
	w.line("Isolation other boot, no proofs: %s", outcome(iso.Quiesce(ctx, other)))
	other.NodeID = 9
	w.line("Isolation other node: %s", outcome(iso.Quiesce(ctx, other)))

	o2 := fixtureOptions(clock, 1, 1)
	o2.BootID = "old"
	r2, _ := NewOwners(o2)
	d, _ := r2.Reserve(ownerClaim("d"), okClose)
	w.line("r2 Close: %s", outcome(r2.Close(ctx)))
	proof, err := r2.Retirement()
	node, boot, last := proof.Identity()
	w.line("r2 Retirement: %s %d %s %d", outcome(err), node, boot, last)
	d.BootID = boot
	w.line("Isolation with the proof: %s", outcome(Isolation{Owners: r, Retired: RetiredBoots{proof}}.Quiesce(ctx, d)))
	d.ConnectionID++
	w.line("Isolation past the proof: %s", outcome(Isolation{Owners: r, Retired: RetiredBoots{proof}}.Quiesce(ctx, d)))

	sw, err := NewOwnerSweeper(OwnerSweeperOptions{Owners: r2})
	so := sw.Options()
	w.line("NewOwnerSweeper: %s limit %d interval %v turn %v", outcome(err), so.Limit, so.Interval, so.TurnTimeout)
	_, err = NewOwnerSweeper(OwnerSweeperOptions{Owners: r2, Registry: 42})
	w.line("NewOwnerSweeper bad registry: %s", outcome(err))
	w.line("Turn: %+v", sw.Turn(ctx))
	compareTranscript(t, "mqttsession.txt", w.b.String())
}
