package wkcore

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// nextSlotID hands out distinct slot ids across tests.
var nextSlotID atomic.Uint64

func newTestSlot(t testing.TB, limits Limits, leader bool) *Slot {
	t.Helper()
	s, err := NewSlot(nextSlotID.Add(1), limits)
	if err != nil {
		t.Fatalf("NewSlot: %v", err)
	}
	t.Cleanup(s.Close)
	if leader {
		if err := s.SetLeader(); err != nil {
			t.Fatalf("SetLeader: %v", err)
		}
	}
	return s
}

// scale shrinks loop counts under -tags debug, where every C call runs a GC.
func scale(n int) int {
	if debugBuild {
		return max(n/500, 4)
	}
	return n
}

func TestNewSlotStartsAsOpenFollower(t *testing.T) {
	s := newTestSlot(t, Limits{}, false)
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	if st != (SlotState{}) {
		t.Fatalf("state %+v, want zero", st)
	}
	if s.ID() == 0 {
		t.Fatal("ID() = 0")
	}
}

func TestNewSlotRejectsLimitAboveMax(t *testing.T) {
	for _, l := range []Limits{{MaxQueuedControls: MaxLimit + 1}, {MaxQueuedBackgroundControls: MaxLimit + 1}} {
		if s, err := NewSlot(1, l); !errors.Is(err, ErrInvalidArgument) || s != nil {
			t.Fatalf("NewSlot(%+v) = %v, %v; want ErrInvalidArgument", l, s, err)
		}
	}
	// MaxLimit itself is accepted (the total limit is kept small: it sizes the
	// queue's memory).
	s, err := NewSlot(1, Limits{MaxQueuedControls: 16, MaxQueuedBackgroundControls: MaxLimit})
	if err != nil {
		t.Fatalf("NewSlot at MaxLimit: %v", err)
	}
	s.Close()
}

// Upstream step_test.go: total 4, background 1; the 2nd background proposal
// is throttled and the next foreground one is admitted.
func TestBackgroundProposalAdmissionLeavesForegroundReserve(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 4, MaxQueuedBackgroundControls: 1}, true)
	if err := s.Admit(ControlPropose, ProposalClassBackground, 1); err != nil {
		t.Fatalf("first background: %v", err)
	}
	err := s.Admit(ControlPropose, ProposalClassBackground, 2)
	if !errors.Is(err, ErrBackgroundProposalThrottled) {
		t.Fatalf("second background: %v, want ErrBackgroundProposalThrottled", err)
	}
	if err := s.Admit(ControlPropose, ProposalClassForeground, 3); err != nil {
		t.Fatalf("foreground: %v", err)
	}
	st, _ := s.State()
	if st.Queued != 2 || st.QueuedBackground != 1 {
		t.Fatalf("state %+v", st)
	}
}

// Upstream step_test.go records ["background:ok","background:throttled"]
// through its observer; wkcore's observer is the per-slot counters.
func TestProposalAdmissionObserverRecordsBackgroundThrottle(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 4, MaxQueuedBackgroundControls: 1}, true)
	_ = s.Admit(ControlPropose, ProposalClassBackground, 1)
	_ = s.Admit(ControlPropose, ProposalClassBackground, 2)
	c, err := s.Counters()
	if err != nil {
		t.Fatal(err)
	}
	want := AdmissionCounters{BackgroundOK: 1, BackgroundThrottled: 1}
	if c != want {
		t.Fatalf("counters %+v, want %+v", c, want)
	}
	if c.Get(ProposalClassBackground, AdmissionThrottled) != 1 || c.Get("", AdmissionOK) != 0 {
		t.Fatalf("Get disagrees with %+v", c)
	}
}

// Upstream step_test.go: with limit 1, the 2nd TransferLeader is plain
// ErrSlotBusy (not proposal backpressure).
func TestEnqueueControlRejectsWhenQueueLimitReached(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 1}, false)
	if err := s.Admit(ControlTransferLeader, ProposalClassForeground, 1); err != nil {
		t.Fatalf("first: %v", err)
	}
	err := s.Admit(ControlTransferLeader, ProposalClassForeground, 2)
	if err != ErrSlotBusy {
		t.Fatalf("second: %v, want exactly ErrSlotBusy", err)
	}
	if errors.Is(err, ErrProposalBackpressure) {
		t.Fatal("a busy TransferLeader must not be proposal backpressure")
	}
	if c, _ := s.Counters(); c != (AdmissionCounters{}) {
		t.Fatalf("non-proposal kinds must not count: %+v", c)
	}
}

func TestBusyProposalIsBackpressureAndSlotBusy(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 1}, true)
	if err := s.Admit(ControlPropose, ProposalClassForeground, 1); err != nil {
		t.Fatal(err)
	}
	err := s.Admit(ControlPropose, ProposalClassForeground, 2)
	if err == nil || err.Error() != "multiraft: proposal backpressure: multiraft: slot busy" {
		t.Fatalf("busy proposal: %v", err)
	}
	if !errors.Is(err, ErrProposalBackpressure) || !errors.Is(err, ErrSlotBusy) {
		t.Fatalf("busy proposal %v must match ErrProposalBackpressure and ErrSlotBusy", err)
	}
	if c, _ := s.Counters(); c != (AdmissionCounters{ForegroundOK: 1, ForegroundBusy: 1}) {
		t.Fatalf("counters %+v", c)
	}
}

// Upstream step_test.go: after CloseSlot, admissions give ErrSlotClosed.
func TestCloseSlotBlocksNewAdmissions(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	other, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := s.CloseSlot(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []ControlKind{ControlPropose, ControlConfigChange, ControlTransferLeader} {
		if err := other.Admit(k, ProposalClassForeground, 1); err != ErrSlotClosed {
			t.Fatalf("%v after CloseSlot: %v, want ErrSlotClosed", k, err)
		}
	}
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassBackground, []uint64{1, 2}); n != 0 || err != ErrSlotClosed {
		t.Fatalf("batch after CloseSlot: %d, %v", n, err)
	}
	if st, _ := s.State(); !st.Closed {
		t.Fatalf("state %+v", st)
	}
	if c, _ := s.Counters(); c != (AdmissionCounters{}) {
		t.Fatalf("closed outcomes must not count: %+v", c)
	}
}

// Upstream proposal_test.go: a queued higher-term message demotes the slot at
// once; here that is Demote, and the very next Propose is ErrNotLeader.
func TestProposeRejectsStaleLeaderAfterHigherTermMessageQueued(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	if err := s.Admit(ControlPropose, ProposalClassForeground, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Demote(); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlPropose, ProposalClassForeground, 2); err != ErrNotLeader {
		t.Fatalf("propose after demote: %v, want ErrNotLeader", err)
	}
	if c, _ := s.Counters(); c != (AdmissionCounters{ForegroundOK: 1, ForegroundNotLeader: 1}) {
		t.Fatalf("counters %+v", c)
	}
}

func TestChangeConfigRejectsStaleLeaderAfterHigherTermMessageQueued(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	if err := s.Demote(); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlConfigChange, ProposalClassForeground, 1); err != ErrNotLeader {
		t.Fatalf("config change after demote: %v, want ErrNotLeader", err)
	}
	// Role is checked only for Propose and ConfigChange.
	if err := s.Admit(ControlTransferLeader, ProposalClassForeground, 2); err != nil {
		t.Fatalf("transfer on follower: %v", err)
	}
	if c, _ := s.Counters(); c != (AdmissionCounters{}) {
		t.Fatalf("config change outcomes must not count: %+v", c)
	}
}

func TestConfigChangePendingUntilResolved(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	if err := s.Admit(ControlConfigChange, ProposalClassForeground, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlConfigChange, ProposalClassForeground, 2); err != ErrConfigChangePending {
		t.Fatalf("second config change: %v", err)
	}
	if st, _ := s.State(); !st.ConfigChangePending {
		t.Fatalf("state %+v", st)
	}
	items := make([]Item, 4)
	if n, err := s.Drain(items); n != 1 || err != nil || items[0].Kind != ControlConfigChange || items[0].Token != 1 {
		t.Fatalf("drain: %d %v %+v", n, err, items[0])
	}
	if err := s.ConfigChangeResolved(); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlConfigChange, ProposalClassForeground, 3); err != nil {
		t.Fatalf("config change after resolve: %v", err)
	}
}

func TestFailRecordsFirstCode(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	if ok, err := s.Fail(7); !ok || err != nil {
		t.Fatalf("Fail(7) = %v, %v", ok, err)
	}
	if ok, err := s.Fail(9); ok || err != nil {
		t.Fatalf("Fail(9) = %v, %v; want false, nil", ok, err)
	}
	err := s.Admit(ControlPropose, ProposalClassForeground, 1)
	var fe FatalError
	if !errors.As(err, &fe) || fe.Code != 7 || err != (FatalError{Code: 7}) {
		t.Fatalf("admit after Fail: %v", err)
	}
	if err.Error() != ErrSlotFailed.Error()+" (fatal code 7)" || !errors.Is(err, ErrSlotFailed) {
		t.Fatalf("text %q", err.Error())
	}
	if _, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, []uint64{1}); err != (FatalError{Code: 7}) {
		t.Fatalf("batch after Fail: %v", err)
	}
	if st, _ := s.State(); !st.Fatal || st.FatalCode != 7 {
		t.Fatalf("state %+v", st)
	}
}

func TestUnknownKindIsInvalidArgument(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	for _, k := range []ControlKind{0, 8, 255} {
		if err := s.Admit(k, ProposalClassForeground, 1); err != ErrInvalidArgument {
			t.Fatalf("kind %d: %v", k, err)
		}
	}
}

func TestDrainIsFIFOAndKeepsKindAndClass(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	type in struct {
		kind  ControlKind
		class ProposalClass
	}
	ins := []in{
		{ControlPropose, ProposalClassBackground},
		{ControlPropose, "unknown"},
		{ControlCompactLog, ProposalClassBackground},
		{ControlFreshStatus, ProposalClassForeground},
		{ControlCaptureHashSlotSnapshot, ""},
	}
	for i, x := range ins {
		if err := s.Admit(x.kind, x.class, uint64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Drain(nil); err != ErrInvalidArgument {
		t.Fatalf("Drain(nil): %v", err)
	}
	out := make([]Item, 3)
	var got []Item
	for {
		n, err := s.Drain(out)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		got = append(got, out[:n]...)
	}
	if len(got) != len(ins) {
		t.Fatalf("drained %d items, want %d", len(got), len(ins))
	}
	for i, it := range got {
		// The class is stored as given for every kind, normalized.
		if it.Token != uint64(100+i) || it.Kind != ins[i].kind || it.Class() != ins[i].class.Normalize() {
			t.Fatalf("item %d = %+v (class %s), want %+v", i, it, it.Class(), ins[i])
		}
	}
}

func TestDrainResetsBackgroundQuota(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 8, MaxQueuedBackgroundControls: 2}, true)
	n, err := s.AdmitBatch(ControlPropose, ProposalClassBackground, []uint64{1, 2, 3, 4})
	if n != 2 || !errors.Is(err, ErrBackgroundProposalThrottled) || !errors.Is(err, ErrProposalBackpressure) {
		t.Fatalf("AdmitBatch = %d, %v", n, err)
	}
	if err.Error() != "multiraft: background proposal throttled: multiraft: proposal backpressure" {
		t.Fatalf("text %q", err)
	}
	// A partial drain frees the quota of the items it took (wkcore's exact
	// accounting) ...
	if n, err := s.Drain(make([]Item, 1)); n != 1 || err != nil {
		t.Fatalf("Drain: %d %v", n, err)
	}
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassBackground, []uint64{5, 6}); n != 1 || !errors.Is(err, ErrBackgroundProposalThrottled) {
		t.Fatalf("AdmitBatch after partial drain = %d, %v", n, err)
	}
	// ... and taking everything resets it, as upstream's takeControlBatch.
	if n, err := s.Drain(make([]Item, 8)); n != 2 || err != nil {
		t.Fatalf("Drain: %d %v", n, err)
	}
	if st, _ := s.State(); st.Queued != 0 || st.QueuedBackground != 0 {
		t.Fatalf("state after full drain %+v", st)
	}
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassBackground, []uint64{7, 8, 9}); n != 2 || !errors.Is(err, ErrBackgroundProposalThrottled) {
		t.Fatalf("AdmitBatch after full drain = %d, %v", n, err)
	}
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, nil); n != 0 || err != nil {
		t.Fatalf("empty AdmitBatch = %d, %v", n, err)
	}
	// Every refused item of a batch counts, as if each were its own Propose:
	// 2 of {1,2,3,4}, 1 of {5,6}, 1 of {7,8,9}.
	c, _ := s.Counters()
	if c.BackgroundOK != 5 || c.BackgroundThrottled != 4 {
		t.Fatalf("counters %+v", c)
	}
}

func TestCloseIsIdempotentAndUseAfterCloseFails(t *testing.T) {
	s, err := NewSlot(nextSlotID.Add(1), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	s.Close()
	s.Close()
	if s.ID() != id {
		t.Fatal("ID changed after Close")
	}
	checks := map[string]error{
		"Admit":                s.Admit(ControlPropose, ProposalClassForeground, 1),
		"SetLeader":            s.SetLeader(),
		"Demote":               s.Demote(),
		"CloseSlot":            s.CloseSlot(),
		"ConfigChangeResolved": s.ConfigChangeResolved(),
	}
	_, checks["AdmitBatch"] = s.AdmitBatch(ControlPropose, ProposalClassForeground, []uint64{1})
	_, checks["Drain"] = s.Drain(make([]Item, 1))
	_, checks["Fail"] = s.Fail(1)
	_, checks["State"] = s.State()
	_, checks["Counters"] = s.Counters()
	_, checks["Clone"] = s.Clone()
	for name, err := range checks {
		if err != ErrHandleClosed {
			t.Errorf("%s after Close: %v, want ErrHandleClosed", name, err)
		}
	}
	var nilSlot *Slot
	nilSlot.Close()
	if err := nilSlot.Admit(ControlPropose, ProposalClassForeground, 1); err != ErrHandleClosed {
		t.Errorf("nil Slot: %v", err)
	}
}

func TestCloneSharesTheSlot(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	c, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() != s.ID() {
		t.Fatalf("clone id %d, want %d", c.ID(), s.ID())
	}
	if err := c.Admit(ControlPropose, ProposalClassForeground, 42); err != nil {
		t.Fatal(err)
	}
	c.Close()
	out := make([]Item, 2)
	if n, err := s.Drain(out); n != 1 || err != nil || out[0].Token != 42 {
		t.Fatalf("Drain after clone closed: %d %v %+v", n, err, out[0])
	}
}

// Several producers admit while one consumer drains: every admitted token is
// drained exactly once, in per-producer order, and the counters agree.
func TestConcurrentAdmitAndDrainLosesNothing(t *testing.T) {
	const producers = 4
	perProducer := scale(50000)
	s := newTestSlot(t, Limits{MaxQueuedControls: 256, MaxQueuedBackgroundControls: 64}, true)

	var (
		wg       sync.WaitGroup
		admitted [producers]atomic.Uint64
		done     atomic.Bool
		drained  = make(map[uint64]bool)
		lastSeq  [producers]int64
	)
	for p := range lastSeq {
		lastSeq[p] = -1
	}
	consumerErr := make(chan error, 1)
	go func() {
		out := make([]Item, 64)
		check := func(n int) error {
			for _, it := range out[:n] {
				if drained[it.Token] {
					return errors.New("token drained twice")
				}
				drained[it.Token] = true
				p, seq := int(it.Token>>32), int64(it.Token&0xffffffff)
				if seq <= lastSeq[p] {
					return errors.New("tokens of one producer out of order")
				}
				lastSeq[p] = seq
			}
			return nil
		}
		for {
			finished := done.Load()
			n, err := s.Drain(out)
			if err == nil {
				err = check(n)
			}
			if err != nil {
				consumerErr <- err
				return
			}
			if n == 0 {
				if finished {
					consumerErr <- nil
					return
				}
				runtime.Gosched()
			}
		}
	}()
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			class := ProposalClassForeground
			if p%2 == 1 {
				class = ProposalClassBackground
			}
			batch := make([]uint64, 0, 8)
			for i := 0; i < perProducer; {
				token := uint64(p)<<32 | uint64(i)
				if i%3 == 0 {
					// Batches of up to 8, retrying the refused tail.
					batch = batch[:0]
					for j := i; j < perProducer && j < i+8; j++ {
						batch = append(batch, uint64(p)<<32|uint64(j))
					}
					n, err := s.AdmitBatch(ControlPropose, class, batch)
					if err != nil && !errors.Is(err, ErrProposalBackpressure) {
						t.Errorf("AdmitBatch: %v", err)
						return
					}
					i += n
					admitted[p].Add(uint64(n))
					if n == 0 {
						runtime.Gosched()
					}
					continue
				}
				err := s.Admit(ControlPropose, class, token)
				switch {
				case err == nil:
					i++
					admitted[p].Add(1)
				case errors.Is(err, ErrProposalBackpressure):
					runtime.Gosched()
				default:
					t.Errorf("Admit: %v", err)
					return
				}
			}
		}(p)
	}
	wg.Wait()
	done.Store(true)
	if err := <-consumerErr; err != nil {
		t.Fatal(err)
	}
	total := uint64(0)
	for p := range admitted {
		total += admitted[p].Load()
	}
	if total != producers*uint64(perProducer) || uint64(len(drained)) != total {
		t.Fatalf("admitted %d, drained %d, want %d", total, len(drained), producers*perProducer)
	}
	c, _ := s.Counters()
	if c.ForegroundOK+c.BackgroundOK != total {
		t.Fatalf("ok counters %+v, want %d", c, total)
	}
	if st, _ := s.State(); st.Queued != 0 {
		t.Fatalf("state %+v", st)
	}
}

func TestFinalizerReleasesForgottenSlot(t *testing.T) {
	// Not observable from Go beyond "does not crash": create and drop handles,
	// then force collections so their finalizers run Close.
	for i := 0; i < 100; i++ {
		s, err := NewSlot(uint64(i+1), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Admit(ControlTransferLeader, ProposalClassForeground, 1)
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}
