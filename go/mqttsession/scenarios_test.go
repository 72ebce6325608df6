package mqttsession

// The replay of testdata/owner/scenarios.json (the Rust suite's
// core/tests/owner_scenarios.rs is the reference replay; the file has no
// README yet), against the build's Owners. The Go API has no owner handles:
// a step without by_identity (null) runs by the owner's own identity, as one
// with an empty mutation does. A step the replay does not know fails the
// test; so does an unknown field.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	scenarioGuard   = 10 * time.Second
	scenarioPending = 50 * time.Millisecond
	minScenarios    = 24
)

type scenarioFile struct {
	System    string            `json:"system"`
	Scenarios []json.RawMessage `json:"scenarios"`
}

type scenario struct {
	Name     string            `json:"name"`
	Upstream string            `json:"upstream"`
	Config   scenarioConfig    `json:"config"`
	Steps    []json.RawMessage `json:"steps"`
}

type scenarioConfig struct {
	NodeID         uint64 `json:"node_id"`
	BootID         string `json:"boot_id"`
	Capacity       int    `json:"capacity"`
	MaxOperations  int    `json:"max_operations"`
	PendingTimeout int64  `json:"pending_timeout"`
	MaxLease       int64  `json:"max_lease"`
	CloseRetry     int64  `json:"close_retry"`
	Start          uint64 `json:"start"`
}

type mutation struct {
	Namespace              *string `json:"namespace"`
	ClientID               *string `json:"client_id"`
	SessionGenerationDelta *uint64 `json:"session_generation_delta"`
	OwnerGenerationDelta   *uint64 `json:"owner_generation_delta"`
	NodeID                 *uint64 `json:"node_id"`
	BootID                 *string `json:"boot_id"`
	ConnectionID           *uint64 `json:"connection_id"`
	ConnectionIDDelta      *uint64 `json:"connection_id_delta"`
}

func (m *mutation) apply(o Owner) Owner {
	if m == nil {
		return o
	}
	if m.Namespace != nil {
		o.Key.Namespace = *m.Namespace
	}
	if m.ClientID != nil {
		o.Key.ClientID = *m.ClientID
	}
	if m.SessionGenerationDelta != nil {
		o.SessionGeneration += *m.SessionGenerationDelta
	}
	if m.OwnerGenerationDelta != nil {
		o.OwnerGeneration += *m.OwnerGenerationDelta
	}
	if m.NodeID != nil {
		o.NodeID = *m.NodeID
	}
	if m.BootID != nil {
		o.BootID = *m.BootID
	}
	if m.ConnectionID != nil {
		o.ConnectionID = *m.ConnectionID
	}
	if m.ConnectionIDDelta != nil {
		o.ConnectionID += *m.ConnectionIDDelta
	}
	return o
}

type claimJ struct {
	Namespace         string `json:"namespace"`
	ClientID          string `json:"client_id"`
	UID               string `json:"uid"`
	SessionGeneration uint64 `json:"session_generation"`
	OwnerGeneration   uint64 `json:"owner_generation"`
}

type snapshotJ struct {
	Held       int  `json:"held"`
	Pending    int  `json:"pending"`
	Active     int  `json:"active"`
	Closing    int  `json:"closing"`
	Operations int  `json:"operations"`
	Deadlines  int  `json:"deadlines"`
	Uncertain  int  `json:"uncertain"`
	Stopped    bool `json:"stopped"`
}

type sweepCountsJ struct {
	Turns    uint64 `json:"turns"`
	Visited  uint64 `json:"visited"`
	Failures uint64 `json:"failures"`
}

// step is every step's fields; stepFields says which each op has.
type step struct {
	Op               string          `json:"op"`
	Owner            *string         `json:"owner"`
	Claim            *claimJ         `json:"claim"`
	Close            []string        `json:"close"`
	Expect           json.RawMessage `json:"expect"`
	ConnectionID     *uint64         `json:"connection_id"`
	ByIdentity       *mutation       `json:"by_identity"`
	As               *string         `json:"as"`
	Operation        string          `json:"operation"`
	Revision         uint64          `json:"revision"`
	Until            *uint64         `json:"until"`
	UntilIn          *uint64         `json:"until_in"`
	Budget           string          `json:"budget"`
	Task             string          `json:"task"`
	By               uint64          `json:"by"`
	Limit            int             `json:"limit"`
	Visited          int             `json:"visited"`
	LastConnectionID *uint64         `json:"last_connection_id"`
}

var stepFields = map[string][]string{
	"reserve":        {"owner", "claim", "close", "expect", "connection_id"},
	"activate":       {"owner", "by_identity", "revision", "until", "until_in", "expect"},
	"renew":          {"owner", "by_identity", "revision", "until", "until_in", "expect"},
	"begin":          {"owner", "by_identity", "as", "expect"},
	"done":           {"operation"},
	"check":          {"operation", "expect"},
	"mark_uncertain": {"operation", "expect"},
	"uid":            {"operation", "expect"},
	"cancelled":      {"operation", "expect"},
	"fence":          {"owner", "by_identity", "expect"},
	"quiesce":        {"owner", "by_identity", "budget", "expect"},
	"quiesce_start":  {"owner", "by_identity", "budget", "as"},
	"pending":        {"task"},
	"join":           {"task", "expect"},
	"advance":        {"by"},
	"sweep":          {"limit", "budget", "expect", "visited"},
	"stop_admission": {},
	"close":          {"budget", "expect"},
	"snapshot":       {"expect"},
	"close_calls":    {"owner", "expect"},
	"retirement":     {"expect", "last_connection_id"},
	"metrics":        {"expect"},
}

func resultName(err error) string {
	switch err {
	case nil:
		return "ok"
	case ErrOwnerInvalid:
		return "invalid"
	case ErrOwnerFenced:
		return "fenced"
	case ErrOwnerUnknown:
		return "unknown"
	case ErrOwnerLimit:
		return "limit"
	case ErrOwnerStopped:
		return "stopped"
	case ErrOwnerClose:
		return "close"
	case context.Canceled:
		return "canceled"
	case context.DeadlineExceeded:
		return "deadline_exceeded"
	}
	return fmt.Sprintf("unexpected error %v", err)
}

type scriptedClose struct {
	outcomes []string
	calls    atomic.Uint64
	// total counts the close calls of every owner of the replay.
	total *atomic.Uint64
}

func (s *scriptedClose) close(context.Context) error {
	n := int(s.calls.Add(1) - 1)
	s.total.Add(1)
	switch o := s.outcomes[min(n, len(s.outcomes)-1)]; o {
	case "ok":
		return nil
	case "fail":
		return errors.New("scripted close failure")
	case "panic":
		panic("scripted close panic (owner scenarios)")
	case "canceled":
		return context.Canceled
	case "deadline_exceeded":
		return context.DeadlineExceeded
	default:
		panic("unknown close outcome " + o)
	}
}

type replayOwner struct {
	owner  Owner
	script *scriptedClose
}

type replay struct {
	t      *testing.T
	cfg    scenarioConfig
	clock  *fakeClock
	base   time.Time
	r      *Owners
	owners map[string]*replayOwner
	ops    map[string]*Operation
	done   map[string]bool
	tasks  map[string]chan error
	// closes counts the close calls of every owner (the "brief" budget's
	// trigger).
	closes atomic.Uint64
}

// briefContext is the "brief" budget: a context that runs out (its Err is
// context.DeadlineExceeded) once a close callback has been entered after
// its making, so a call that closes a transport and then waits for
// admitted work runs out exactly while it waits, however slow the machine
// (a wall-clock timeout could run out before the call's first step). It
// also runs out after scenarioGuard.
type briefContext struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func (c *briefContext) Done() <-chan struct{} { return c.done }

func (c *briefContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *briefContext) expire() { c.once.Do(func() { close(c.done) }) }

func (p *replay) brief() (context.Context, context.CancelFunc) {
	c := &briefContext{Context: context.Background(), done: make(chan struct{})}
	start := p.closes.Load()
	stop := make(chan struct{})
	go func() {
		end := time.Now().Add(scenarioGuard)
		for p.closes.Load() == start && time.Now().Before(end) {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
		c.expire()
	}()
	var once sync.Once
	return c, func() { once.Do(func() { close(stop) }); c.expire() }
}

func (p *replay) budget(name string) (context.Context, context.CancelFunc) {
	switch name {
	case "unbounded":
		return context.WithTimeout(context.Background(), scenarioGuard)
	case "cancelled":
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case "expired":
		return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	case "brief":
		return p.brief()
	}
	p.t.Fatalf("unknown budget %q", name)
	return nil, nil
}

func (p *replay) owner(name *string) *replayOwner {
	if name == nil || p.owners[*name] == nil {
		p.t.Fatalf("no owner named %v", name)
	}
	return p.owners[*name]
}

func (p *replay) op(name string) *Operation {
	op, ok := p.ops[name]
	if !ok {
		p.t.Fatalf("no operation named %q", name)
	}
	return op
}

func (p *replay) until(s *step) time.Time {
	switch {
	case s.Until != nil && s.UntilIn == nil:
		return p.base.Add(time.Duration(*s.Until - p.cfg.Start))
	case s.Until == nil && s.UntilIn != nil:
		return p.clock.Now().Add(time.Duration(*s.UntilIn))
	}
	p.t.Fatal("exactly one of until and until_in")
	return time.Time{}
}

func (p *replay) expectString(s *step) string {
	var want string
	if err := json.Unmarshal(s.Expect, &want); err != nil {
		p.t.Fatalf("%s: expect %s: %v", s.Op, s.Expect, err)
	}
	return want
}

func (p *replay) result(s *step, err error) error {
	if got, want := resultName(err), p.expectString(s); got != want {
		return fmt.Errorf("got %s, expected %s", got, want)
	}
	return nil
}

func waitFor(done func() bool) bool {
	end := time.Now().Add(scenarioGuard)
	for !done() {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func (p *replay) step(s *step) error {
	switch s.Op {
	case "reserve":
		if len(s.Close) == 0 {
			p.t.Fatal("reserve: an empty close script")
		}
		script := &scriptedClose{outcomes: s.Close, total: &p.closes}
		c := s.Claim
		o, err := p.r.Reserve(Claim{Key: Key{c.Namespace, c.ClientID}, UID: c.UID, SessionGeneration: c.SessionGeneration,
			OwnerGeneration: c.OwnerGeneration}, script.close)
		if e := p.result(s, err); e != nil {
			return e
		}
		if err == nil {
			if s.Owner == nil || s.ConnectionID == nil {
				p.t.Fatal("reserve: a name and a connection id exactly when ok")
			}
			if o.ConnectionID != *s.ConnectionID {
				return fmt.Errorf("connection id %d, expected %d", o.ConnectionID, *s.ConnectionID)
			}
			p.owners[*s.Owner] = &replayOwner{owner: o, script: script}
		}
		return nil
	case "activate", "renew":
		o := s.ByIdentity.apply(p.owner(s.Owner).owner)
		until := p.until(s)
		if s.Op == "activate" {
			return p.result(s, p.r.Activate(o, s.Revision, until))
		}
		return p.result(s, p.r.Renew(o, s.Revision, until))
	case "begin":
		op, err := p.r.Begin(context.Background(), s.ByIdentity.apply(p.owner(s.Owner).owner))
		if e := p.result(s, err); e != nil {
			return e
		}
		if err == nil {
			if s.As == nil {
				p.t.Fatal("begin: a name exactly when ok")
			}
			p.ops[*s.As] = op
		}
		return nil
	case "done":
		p.op(s.Operation).Done()
		p.done[s.Operation] = true
		return nil
	case "check":
		return p.result(s, p.op(s.Operation).Check())
	case "mark_uncertain":
		return p.result(s, p.op(s.Operation).MarkUncertain())
	case "uid":
		if got, want := p.op(s.Operation).UID(), p.expectString(s); got != want {
			return fmt.Errorf("uid %q, expected %q", got, want)
		}
		return nil
	case "cancelled":
		// The core polls done, then fenced, then stopped; a Go context
		// keeps its first cause, so a done operation is "done" here.
		var want *string
		if err := json.Unmarshal(s.Expect, &want); err != nil {
			p.t.Fatal(err)
		}
		ctx := p.op(s.Operation).Context()
		got := "null"
		switch {
		case p.done[s.Operation]:
			got = "done"
		case ctx.Err() == nil:
		case context.Cause(ctx) == ErrOwnerFenced:
			got = "fenced"
		case context.Cause(ctx) == ErrOwnerStopped:
			got = "stopped"
		default:
			got = fmt.Sprintf("cause %v", context.Cause(ctx))
		}
		w := "null"
		if want != nil {
			w = *want
		}
		if got != w {
			return fmt.Errorf("cancellation %s, expected %s", got, w)
		}
		return nil
	case "fence":
		return p.result(s, p.r.Fence(s.ByIdentity.apply(p.owner(s.Owner).owner)))
	case "quiesce":
		ctx, cancel := p.budget(s.Budget)
		defer cancel()
		return p.result(s, p.r.Quiesce(ctx, s.ByIdentity.apply(p.owner(s.Owner).owner)))
	case "quiesce_start":
		if s.As == nil || p.tasks[*s.As] != nil {
			p.t.Fatal("quiesce_start: a fresh task name")
		}
		ctx, cancel := p.budget(s.Budget)
		o := s.ByIdentity.apply(p.owner(s.Owner).owner)
		ch := make(chan error, 1)
		go func() { defer cancel(); ch <- p.r.Quiesce(ctx, o) }()
		p.tasks[*s.As] = ch
		return nil
	case "pending":
		time.Sleep(scenarioPending)
		if len(p.tasks[s.Task]) != 0 {
			return errors.New("the task has finished")
		}
		return nil
	case "join":
		ch := p.tasks[s.Task]
		if ch == nil {
			p.t.Fatalf("no task %q", s.Task)
		}
		delete(p.tasks, s.Task)
		select {
		case err := <-ch:
			return p.result(s, err)
		case <-time.After(scenarioGuard):
			return errors.New("the task did not finish")
		}
	case "advance":
		p.clock.Add(time.Duration(s.By))
		return nil
	case "sweep":
		ctx, cancel := p.budget(s.Budget)
		defer cancel()
		n, err := p.r.Sweep(ctx, s.Limit)
		if e := p.result(s, err); e != nil {
			return e
		}
		if n != s.Visited {
			return fmt.Errorf("visited %d, expected %d", n, s.Visited)
		}
		return nil
	case "stop_admission":
		p.r.StopAdmission()
		return nil
	case "close":
		ctx, cancel := p.budget(s.Budget)
		defer cancel()
		return p.result(s, p.r.Close(ctx))
	case "snapshot":
		var want snapshotJ
		if err := strictJSON(s.Expect, &want); err != nil {
			p.t.Fatal(err)
		}
		g := p.r.Snapshot()
		got := snapshotJ{g.Held, g.Pending, g.Active, g.Closing, g.Operations, g.Deadlines, g.Uncertain, g.Stopped}
		if got != want {
			return fmt.Errorf("snapshot %+v, expected %+v", got, want)
		}
		return nil
	case "close_calls":
		var want uint64
		if err := json.Unmarshal(s.Expect, &want); err != nil {
			p.t.Fatal(err)
		}
		script := p.owner(s.Owner).script
		waitFor(func() bool { return script.calls.Load() >= want })
		if got := script.calls.Load(); got != want {
			return fmt.Errorf("%d close calls, expected %d", got, want)
		}
		return nil
	case "retirement":
		proof, err := p.r.Retirement()
		if e := p.result(s, err); e != nil {
			return e
		}
		if (err == nil) != (s.LastConnectionID != nil) {
			p.t.Fatal("retirement: last_connection_id exactly when ok")
		}
		if err == nil {
			want := RetiredBoot{nodeID: p.cfg.NodeID, bootID: p.cfg.BootID, lastConnectionID: *s.LastConnectionID}
			if proof != want {
				return fmt.Errorf("proof %+v, expected %+v", proof, want)
			}
		}
		return nil
	case "metrics":
		var want sweepCountsJ
		if err := strictJSON(s.Expect, &want); err != nil {
			p.t.Fatal(err)
		}
		c := p.r.sweepCounts()
		if got := (sweepCountsJ{c[0], c[1], c[2]}); got != want {
			return fmt.Errorf("sweep counts %+v, expected %+v", got, want)
		}
		return nil
	}
	p.t.Fatalf("unknown op %q", s.Op)
	return nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func decodeStep(t *testing.T, raw json.RawMessage) *step {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	var op string
	if err := json.Unmarshal(keys["op"], &op); err != nil {
		t.Fatalf("a step without an op: %s", raw)
	}
	allowed, ok := stepFields[op]
	if !ok {
		t.Fatalf("unknown op %q", op)
	}
	for k := range keys {
		found := k == "op"
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			t.Fatalf("%s: unknown field %q", op, k)
		}
	}
	var s step
	if err := strictJSON(raw, &s); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return &s
}

func TestScenarios(t *testing.T) {
	data, err := os.ReadFile("../../testdata/owner/scenarios.json")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("testdata/owner/scenarios.json is not there yet")
	}
	must(t, err)
	var f scenarioFile
	must(t, strictJSON(data, &f))
	eq(t, f.System, "owner", "system")
	if len(f.Scenarios) < minScenarios {
		t.Fatalf("%d scenarios, expected at least %d", len(f.Scenarios), minScenarios)
	}
	names := map[string]bool{}
	for _, raw := range f.Scenarios {
		var sc scenario
		must(t, strictJSON(raw, &sc))
		if names[sc.Name] || sc.Upstream == "" || strings.ToLower(sc.Name) != sc.Name {
			t.Fatalf("scenario %q: duplicate, no upstream, or not snake_case", sc.Name)
		}
		names[sc.Name] = true
		t.Run(sc.Name, func(t *testing.T) {
			c := sc.Config
			clock := newFakeClock()
			r, err := NewOwners(OwnerOptions{NodeID: c.NodeID, BootID: c.BootID, Capacity: c.Capacity,
				MaxOperations: c.MaxOperations, PendingTimeout: time.Duration(c.PendingTimeout),
				MaxLease: time.Duration(c.MaxLease), CloseRetry: time.Duration(c.CloseRetry), Now: clock.Now})
			must(t, err)
			p := &replay{t: t, cfg: c, clock: clock, base: clock.Now(), r: r, owners: map[string]*replayOwner{},
				ops: map[string]*Operation{}, done: map[string]bool{}, tasks: map[string]chan error{}}
			for i, raw := range sc.Steps {
				if err := p.step(decodeStep(t, raw)); err != nil {
					t.Fatalf("step %d: %s: %v", i, raw, err)
				}
			}
			if len(p.tasks) != 0 {
				t.Fatalf("tasks never joined: %v", p.tasks)
			}
			for _, op := range p.ops {
				op.Done()
			}
		})
	}
}
