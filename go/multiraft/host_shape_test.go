package multiraft

import (
	"errors"
	"testing"
)

// The host's own types, as upstream's package declares them when it does not
// alias this package's.
type (
	hostSlotID uint64
	hostClass  string
)

type hostObserver struct{ seen []string }

func (o *hostObserver) ObserveSlotProposalAdmission(slot hostSlotID, class hostClass, result string) {
	o.seen = append(o.seen, string(class)+":"+result)
	if slot != 9 {
		panic("wrong slot")
	}
}

// upstreamShaped is an observer with upstream's method, its slot id and
// class being this package's (as upstream's aliases make them).
type upstreamShaped struct{ n int }

func (o *upstreamShaped) ObserveSlotProposalAdmission(_ SlotID, _ ProposalClass, _ string) { o.n++ }

var _ ProposalAdmissionObserver = (*upstreamShaped)(nil)

// An observer of upstream's shape works directly (aliased types) or through
// AdmissionObserverOf (the host's own types); a nil one costs nothing.
func TestObserverShapes(t *testing.T) {
	host := &hostObserver{}
	q, err := NewControlQueue[int](9, Options{Observer: AdmissionObserverOf(host.ObserveSlotProposalAdmission)})
	must(t, err)
	defer q.Close()
	must(t, q.SetLeader())
	must(t, q.Admit(ControlPropose, ProposalClassBackground, 1))
	must(t, q.Demote())
	if err := q.Admit(ControlPropose, "", 2); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower admission: %v", err)
	}
	if len(host.seen) != 2 || host.seen[0] != "background:ok" || host.seen[1] != "foreground:not_leader" {
		t.Fatalf("observer saw %q", host.seen)
	}
	if AdmissionObserverOf[hostSlotID, hostClass](nil) != nil {
		t.Fatal("a nil observe made an observer")
	}
	direct := &upstreamShaped{}
	q2, err := NewControlQueue[int](1, Options{Observer: direct})
	must(t, err)
	defer q2.Close()
	must(t, q2.SetLeader())
	must(t, q2.Admit(ControlPropose, "", 1))
	if direct.n != 1 {
		t.Fatalf("direct observer calls %d", direct.n)
	}
}

// DiscardMetrics leaves the process-wide registry as it was; the queue's
// own counters and its observer still see every decision.
func TestDiscardMetrics(t *testing.T) {
	global := func() uint64 {
		g, err := GlobalMetrics()
		must(t, err)
		fams, err := g.Families()
		must(t, err)
		var sum uint64
		for _, f := range fams {
			for _, s := range f.Series {
				sum += s.Value
			}
		}
		return sum
	}
	before := global()
	obs := &upstreamShaped{}
	q, err := NewControlQueue[int](3, Options{Observer: obs, DiscardMetrics: true})
	must(t, err)
	must(t, q.SetLeader())
	for i := 0; i < 5; i++ {
		must(t, q.Admit(ControlPropose, "", i))
	}
	c, err := q.Counters()
	must(t, err)
	if c.ForegroundOK != 5 || obs.n != 5 {
		t.Fatalf("counters %+v, observer %d", c, obs.n)
	}
	must(t, q.Close())
	if after := global(); after != before {
		t.Fatalf("the process-wide registry moved from %d to %d", before, after)
	}
}

// The reads that replace upstream's slot fields: closed, fatalErr and the
// limits.
func TestSlotFieldReads(t *testing.T) {
	q, err := NewControlQueue[int](1, Options{Limits: Limits{MaxQueuedControls: 10}})
	must(t, err)
	if q.Closed() || q.FailErr() != nil {
		t.Fatal("a new queue is closed or failed")
	}
	if l, err := q.Limits(); err != nil || l != (Limits{10, 5}) {
		t.Fatalf("limits %+v, %v", l, err)
	}
	fatal := errors.New("disk gone")
	if _, err := q.Fail(fatal); err != nil {
		t.Fatal(err)
	}
	if q.FailErr() != fatal {
		t.Fatalf("FailErr %v", q.FailErr())
	}
	must(t, q.CloseSlot())
	if !q.Closed() {
		t.Fatal("CloseSlot did not close")
	}
	must(t, q.Close())
	if !q.Closed() || q.FailErr() != nil {
		t.Fatal("a released queue")
	}
	if _, err := q.Limits(); err != ErrHandleClosed {
		t.Fatalf("limits after Close: %v", err)
	}
	var nilQ *ControlQueue[int]
	if !nilQ.Closed() || nilQ.FailErr() != nil {
		t.Fatal("a nil queue")
	}
}

// A config change whose host value carries no future (nothing will settle
// it later) is resolved when it is taken, or the slot refuses every later
// config change. The one hook: where the worker takes a config change,
// resolve it at once when there is no future, else when the future settles.
func TestConfigChangeWithoutAFutureIsResolvedWhenTaken(t *testing.T) {
	type action struct{ future *struct{ cc ConfigChange } }
	q, err := NewControlQueue[action](1, Options{})
	must(t, err)
	defer q.Close()
	must(t, q.SetLeader())
	must(t, q.Admit(ControlConfigChange, "", action{}))
	if _, err := q.AdmitConfigChange(action{}); !errors.Is(err, ErrConfigChangePending) {
		t.Fatalf("second config change: %v", err)
	}
	buf := make([]Control[action], 4)
	n, err := q.DrainInto(buf)
	must(t, err)
	if n != 1 || buf[0].Kind != ControlConfigChange || !buf[0].ConfigChange.Pending() {
		t.Fatalf("took %d: %+v", n, buf[:n])
	}
	if a := buf[0].Value; a.future == nil {
		must(t, buf[0].ConfigChange.Resolve()) // the nil case: resolved when taken
	} else {
		a.future.cc = buf[0].ConfigChange
	}
	if err := buf[0].ConfigChange.Resolve(); !errors.Is(err, ErrConfigChangeResolved) {
		t.Fatalf("a second resolve: %v", err)
	}
	// The next config change, with a future: resolved where the future
	// settles (future.resolve in upstream's code).
	f := &struct{ cc ConfigChange }{}
	must(t, q.Admit(ControlConfigChange, "", action{future: f}))
	n, err = q.DrainInto(buf)
	must(t, err)
	if n != 1 {
		t.Fatalf("took %d", n)
	}
	buf[0].Value.future.cc = buf[0].ConfigChange
	if _, err := q.AdmitConfigChange(action{}); !errors.Is(err, ErrConfigChangePending) {
		t.Fatalf("config change while one is in flight: %v", err)
	}
	must(t, f.cc.Resolve()) // the future settled
	cc, err := q.AdmitConfigChange(action{})
	must(t, err)
	must(t, cc.Resolve())
}
