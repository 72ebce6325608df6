package wkcore

import (
	"context"
	"testing"
)

// Upstream step_test.go: a context without a class is foreground, and
// WithProposalClass(background) round-trips.
func TestProposalClassContextDefaultsForeground(t *testing.T) {
	if got := ProposalClassFromContext(context.Background()); got != ProposalClassForeground {
		t.Fatalf("Background ctx: %q", got)
	}
	ctx := WithProposalClass(context.Background(), ProposalClassBackground)
	if got := ProposalClassFromContext(ctx); got != ProposalClassBackground {
		t.Fatalf("round trip: %q", got)
	}
}

func TestProposalClassNormalization(t *testing.T) {
	for in, want := range map[ProposalClass]ProposalClass{
		"":           ProposalClassForeground,
		"foreground": ProposalClassForeground,
		"background": ProposalClassBackground,
		"Background": ProposalClassForeground,
		"bg":         ProposalClassForeground,
	} {
		if got := in.Normalize(); got != want {
			t.Errorf("%q.Normalize() = %q, want %q", in, got, want)
		}
		if got := ProposalClassFromContext(WithProposalClass(context.Background(), in)); got != want {
			t.Errorf("context round trip of %q = %q, want %q", in, got, want)
		}
	}
	// Nil contexts are part of the upstream contract.
	if got := ProposalClassFromContext(nil); got != ProposalClassForeground {
		t.Errorf("nil ctx: %q", got)
	}
	ctx := WithProposalClass(nil, ProposalClassBackground)
	if ctx == nil || ProposalClassFromContext(ctx) != ProposalClassBackground {
		t.Errorf("WithProposalClass(nil, background) = %v", ctx)
	}
	// A foreign value under another key is ignored.
	type otherKey struct{}
	ctx = context.WithValue(context.Background(), otherKey{}, ProposalClassBackground)
	if got := ProposalClassFromContext(ctx); got != ProposalClassForeground {
		t.Errorf("foreign key: %q", got)
	}
}

func TestControlKindValues(t *testing.T) {
	want := []struct {
		k    ControlKind
		v    uint8
		name string
	}{
		{ControlPropose, 1, "propose"},
		{ControlCampaign, 2, "campaign"},
		{ControlConfigChange, 3, "config_change"},
		{ControlTransferLeader, 4, "transfer_leader"},
		{ControlCompactLog, 5, "compact_log"},
		{ControlCaptureHashSlotSnapshot, 6, "capture_hash_slot_snapshot"},
		{ControlFreshStatus, 7, "fresh_status"},
	}
	for _, w := range want {
		if uint8(w.k) != w.v || w.k.String() != w.name {
			t.Errorf("%v = %d, want %d %q", w.k, uint8(w.k), w.v, w.name)
		}
	}
	if ControlKind(9).String() != "control_kind(9)" {
		t.Errorf("unknown kind: %q", ControlKind(9).String())
	}
}
