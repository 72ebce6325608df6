package baseline

import (
	"errors"
	"testing"
)

func TestBackgroundProposalAdmissionLeavesForegroundReserve(t *testing.T) {
	s := New(4, 1)
	s.SetLeader()
	var events []string
	s.Observer = func(_ uint64, c ProposalClass, r string) { events = append(events, string(c)+":"+r) }
	if err := s.EnqueueControl(Action{Kind: ControlPropose, Class: ProposalClassBackground}); err != nil {
		t.Fatalf("first background: %v", err)
	}
	err := s.EnqueueControl(Action{Kind: ControlPropose, Class: ProposalClassBackground})
	if !errors.Is(err, ErrBackgroundProposalThrottled) || !errors.Is(err, ErrProposalBackpressure) {
		t.Fatalf("second background: %v", err)
	}
	if err := s.EnqueueControl(Action{Kind: ControlPropose, Class: "bogus"}); err != nil {
		t.Fatalf("foreground: %v", err)
	}
	want := []string{"background:ok", "background:throttled", "foreground:ok"}
	if len(events) != len(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("events %v, want %v", events, want)
		}
	}
	// Taking the batch resets the background quota.
	batch := s.TakeControlBatch()
	if len(batch) != 2 || batch[1].Class != ProposalClassForeground {
		t.Fatalf("batch %+v", batch)
	}
	s.ReleaseControlBatch(batch)
	if err := s.EnqueueControl(Action{Kind: ControlPropose, Class: ProposalClassBackground}); err != nil {
		t.Fatalf("background after take: %v", err)
	}
}

func TestCheckOrder(t *testing.T) {
	s := New(1, 0)
	if err := s.EnqueueControl(Action{Kind: ControlPropose}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower propose: %v", err)
	}
	if err := s.EnqueueControl(Action{Kind: ControlTransferLeader}); err != nil {
		t.Fatalf("follower transfer: %v", err)
	}
	if err := s.EnqueueControl(Action{Kind: ControlTransferLeader}); err != ErrSlotBusy {
		t.Fatalf("second transfer: %v", err)
	}
	s.SetLeader()
	err := s.EnqueueControl(Action{Kind: ControlPropose})
	if err.Error() != "multiraft: proposal backpressure: multiraft: slot busy" || !errors.Is(err, ErrSlotBusy) {
		t.Fatalf("busy propose: %v", err)
	}
	n, err := s.EnqueueControlBatch(ControlPropose, ProposalClassForeground, []uint64{1, 2})
	if n != 0 || !errors.Is(err, ErrProposalBackpressure) {
		t.Fatalf("batch: %d %v", n, err)
	}
	s.ReleaseControlBatch(s.TakeControlBatch())
	s.QueueConfigChangeFuture()
	if err := s.EnqueueControl(Action{Kind: ControlConfigChange}); err != ErrConfigChangePending {
		t.Fatalf("config change: %v", err)
	}
	s.Close()
	if err := s.EnqueueControl(Action{Kind: ControlConfigChange}); err != ErrSlotClosed {
		t.Fatalf("closed: %v", err)
	}
}
