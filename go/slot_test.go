package wkcore

// Admission sequences (outcomes, state, counters, drains) are replayed from
// testdata/admission/scenarios.json by scenarios_test.go; the tests here cover
// what data cannot: error texts and identities, bad input, the default
// limits, handles, threads and finalizers.

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

// Refusals are the library's errors: their texts are wk_status_str of the
// status returned, a busy action of another kind is exactly ErrSlotBusy, and
// none of them allocates (alloc_go124_test.go).
func TestRefusalErrorsAreTheLibrarys(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 2, MaxQueuedBackgroundControls: 1}, true)
	if err := s.Admit(ControlPropose, ProposalClassBackground, 1); err != nil {
		t.Fatal(err)
	}
	throttled := s.Admit(ControlPropose, ProposalClassBackground, 2)
	if throttled == nil || throttled.Error() != StatusProposalThrottled.String() ||
		!errors.Is(throttled, ErrBackgroundProposalThrottled) || !errors.Is(throttled, ErrProposalBackpressure) ||
		errors.Is(throttled, ErrSlotBusy) {
		t.Fatalf("throttled proposal: %v", throttled)
	}
	if err := s.Admit(ControlCompactLog, ProposalClassForeground, 3); err != nil {
		t.Fatal(err)
	}
	busy := s.Admit(ControlPropose, ProposalClassForeground, 4)
	if busy == nil || busy.Error() != StatusProposalBusy.String() ||
		!errors.Is(busy, ErrProposalBackpressure) || !errors.Is(busy, ErrSlotBusy) {
		t.Fatalf("busy proposal: %v", busy)
	}
	if err := s.Admit(ControlTransferLeader, ProposalClassForeground, 5); err != ErrSlotBusy {
		t.Fatalf("busy transfer: %v, want exactly ErrSlotBusy", err)
	}
	if _, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, []uint64{6}); err != busy {
		t.Fatalf("busy batch: %v, want the error Admit returns", err)
	}
	if err := s.Demote(); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlConfigChange, ProposalClassForeground, 7); err != ErrNotLeader || err.Error() != StatusNotLeader.String() {
		t.Fatalf("follower config change: %v", err)
	}
	if err := s.CloseSlot(); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ControlPropose, ProposalClassForeground, 8); err != ErrSlotClosed || err.Error() != StatusSlotClosed.String() {
		t.Fatalf("closed: %v", err)
	}
}

// A failed slot returns FatalError with the first code, for single and batch
// admissions, with the Rust core's text.
func TestFatalErrorCarriesFirstCode(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	if ok, err := s.Fail(7); !ok || err != nil {
		t.Fatalf("Fail(7) = %v, %v", ok, err)
	}
	if ok, err := s.Fail(9); ok || err != nil {
		t.Fatalf("Fail(9) = %v, %v; want false, nil", ok, err)
	}
	err := s.Admit(ControlPropose, ProposalClassForeground, 1)
	if err != (FatalError{Code: 7}) || !errors.Is(err, ErrSlotFailed) {
		t.Fatalf("admit after Fail: %v", err)
	}
	if err.Error() != StatusSlotFailed.String()+" (fatal code 7)" {
		t.Fatalf("text %q", err.Error())
	}
	if _, err := s.AdmitBatch(ControlCampaign, ProposalClassForeground, []uint64{1}); err != (FatalError{Code: 7}) {
		t.Fatalf("batch after Fail: %v", err)
	}
}

func TestBadInputIsInvalidArgument(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	for _, k := range []ControlKind{0, 8, 255} {
		if err := s.Admit(k, ProposalClassForeground, 1); err != ErrInvalidArgument {
			t.Fatalf("kind %d: %v", k, err)
		}
		if n, err := s.AdmitBatch(k, ProposalClassForeground, []uint64{1}); n != 0 || err != ErrInvalidArgument {
			t.Fatalf("batch of kind %d: %d, %v", k, n, err)
		}
	}
	if _, err := s.Drain(nil); err != ErrInvalidArgument {
		t.Fatalf("Drain(nil): %v", err)
	}
	if _, err := s.Drain([]Item{}); err != ErrInvalidArgument {
		t.Fatalf("Drain(empty): %v", err)
	}
	if st, _ := s.State(); st.Queued != 0 {
		t.Fatalf("bad input queued something: %+v", st)
	}
}

// An empty batch admits nothing and makes no C call.
func TestAdmitBatchSizes(t *testing.T) {
	s := newTestSlot(t, Limits{MaxQueuedControls: 4}, true)
	for _, tokens := range [][]uint64{nil, {}} {
		if n, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, tokens); n != 0 || err != nil {
			t.Fatalf("empty AdmitBatch = %d, %v", n, err)
		}
	}
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, []uint64{1, 2, 3, 4, 5}); n != 4 || !errors.Is(err, ErrSlotBusy) {
		t.Fatalf("AdmitBatch of 5 into 4 = %d, %v", n, err)
	}
	if c, _ := s.Counters(); c.ForegroundOK != 4 || c.ForegroundBusy != 1 {
		t.Fatalf("counters %+v", c)
	}
}

// The upstream defaults, 8192 in all and 4096 background, filled up (too
// many tokens for the shared scenarios).
func TestDefaultLimitsFillUp(t *testing.T) {
	s := newTestSlot(t, Limits{}, true)
	def := DefaultLimits()
	tokens := make([]uint64, def.MaxQueuedControls+1)
	for i := range tokens {
		tokens[i] = uint64(i)
	}
	bg := int(def.MaxQueuedBackgroundControls)
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassBackground, tokens[:bg+1]); n != bg || !errors.Is(err, ErrBackgroundProposalThrottled) {
		t.Fatalf("background batch = %d, %v", n, err)
	}
	fg := int(def.MaxQueuedControls) - bg
	if n, err := s.AdmitBatch(ControlPropose, ProposalClassForeground, tokens[:fg+1]); n != fg || !errors.Is(err, ErrSlotBusy) {
		t.Fatalf("foreground batch = %d, %v", n, err)
	}
	if err := s.Admit(ControlFreshStatus, ProposalClassForeground, 1); err != ErrSlotBusy {
		t.Fatalf("admit into a full default queue: %v", err)
	}
	if st, _ := s.State(); st.Queued != def.MaxQueuedControls || st.QueuedBackground != def.MaxQueuedBackgroundControls {
		t.Fatalf("state %+v", st)
	}
	out := make([]Item, def.MaxQueuedControls+1)
	if n, err := s.Drain(out); n != int(def.MaxQueuedControls) || err != nil {
		t.Fatalf("Drain = %d, %v", n, err)
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
