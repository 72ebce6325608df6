package multiraft_test

// The upstream-visible surface of the package, name by name: upstream's
// pkg/slot/multiraft names a host keeps (sentinels and texts, the proposal
// class, the observer) and the calls the WuKongIM edit of docs/GO.md makes.
// A change to any fails here. WK_API_DUMP=1 prints what is.

import (
	"errors"
	"reflect"
	"testing"

	"github.com/wukongim/wkcore/go/internal/apisurface"
	. "github.com/wukongim/wkcore/go/multiraft"
)

// surfaceCase is apisurface.Case, declared here so the table's literals can
// stay unkeyed.
type surfaceCase struct {
	Kind, Name string
	V          any
	Member     string
	Want       string
}

func TestAPISurface(t *testing.T) {
	q := (*ControlQueue[int])(nil)
	apisurface.Check(t, []surfaceCase{
		{"type", "SlotID", (*SlotID)(nil), "", "uint64 multiraft.SlotID"},
		{"type", "ProposalClass", (*ProposalClass)(nil), "", "string multiraft.ProposalClass"},
		{"value", "ProposalClassForeground", ProposalClassForeground, "", "foreground"},
		{"value", "ProposalClassBackground", ProposalClassBackground, "", "background"},
		{"func", "WithProposalClass", WithProposalClass, "", "func(context.Context, multiraft.ProposalClass) context.Context"},
		{"func", "ProposalClassFromContext", ProposalClassFromContext, "", "func(context.Context) multiraft.ProposalClass"},
		{"method", "ProposalAdmissionObserver.ObserveSlotProposalAdmission",
			reflect.TypeOf((*ProposalAdmissionObserver)(nil)).Elem(), "ObserveSlotProposalAdmission",
			"func(multiraft.SlotID, multiraft.ProposalClass, string)"},
		{"value", "AdmissionOK", AdmissionOK, "", "ok"},
		{"value", "AdmissionBusy", AdmissionBusy, "", "busy"},
		{"value", "AdmissionThrottled", AdmissionThrottled, "", "throttled"},
		{"value", "AdmissionNotLeader", AdmissionNotLeader, "", "not_leader"},
		{"error", "ErrSlotClosed", ErrSlotClosed, "", "multiraft: slot closed"},
		{"error", "ErrNotLeader", ErrNotLeader, "", "multiraft: not leader"},
		{"error", "ErrSlotBusy", ErrSlotBusy, "", "multiraft: slot busy"},
		{"error", "ErrProposalBackpressure", ErrProposalBackpressure, "", "multiraft: proposal backpressure"},
		{"error", "ErrBackgroundProposalThrottled", ErrBackgroundProposalThrottled, "", "multiraft: background proposal throttled"},
		{"error", "ErrConfigChangePending", ErrConfigChangePending, "", "multiraft: config change pending"},
		{"error", "ErrSlotNotFound", ErrSlotNotFound, "", "multiraft: slot not found"},
		{"error", "ErrInvalidOptions", ErrInvalidOptions, "", "multiraft: invalid options"},
		{"func", "NewControlQueue[int]", NewControlQueue[int], "", "func(uint64, multiraft.Options) (*multiraft.ControlQueue[int], error)"},
		{"fields", "Options", Options{}, "", "Limits,Observer,Metrics,DiscardMetrics"},
		{"field", "Options.Observer", Options{}, "Observer", "multiraft.ProposalAdmissionObserver"},
		{"fields", "Limits", Limits{}, "", "MaxQueuedControls,MaxQueuedBackgroundControls"},
		{"value", "DefaultMaxQueuedControls", DefaultMaxQueuedControls, "", "8192"},
		{"value", "DefaultMaxQueuedBackgroundControls", DefaultMaxQueuedBackgroundControls, "", "4096"},
		{"value", "MaxLimit", MaxLimit, "", "33554432"},
		{"value", "Unlimited", Unlimited, "", "33554432"},
		{"method", "ControlQueue.Admit", q, "Admit", "func(multiraft.ControlKind, multiraft.ProposalClass, int) error"},
		{"method", "ControlQueue.AdmitConfigChange", q, "AdmitConfigChange", "func(int) (multiraft.ConfigChange, error)"},
		{"method", "ControlQueue.AdmitBatch", q, "AdmitBatch", "func(multiraft.ControlKind, multiraft.ProposalClass, []int) (int, error)"},
		{"method", "ControlQueue.Drain", q, "Drain", "func(int, func(multiraft.Control[int])) (int, error)"},
		{"method", "ControlQueue.DrainInto", q, "DrainInto", "func([]multiraft.Control[int]) (int, error)"},
		{"method", "ControlQueue.Visit", q, "Visit", "func(func(multiraft.Control[int]) bool) (int, error)"},
		{"method", "ControlQueue.Len", q, "Len", "func() int"},
		{"method", "ControlQueue.SetLeader", q, "SetLeader", "func() error"},
		{"method", "ControlQueue.Demote", q, "Demote", "func() error"},
		{"method", "ControlQueue.CloseSlot", q, "CloseSlot", "func() error"},
		{"method", "ControlQueue.Fail", q, "Fail", "func(error) (bool, error)"},
		{"method", "ControlQueue.State", q, "State", "func() (multiraft.SlotState, error)"},
		{"method", "ControlQueue.Limits", q, "Limits", "func() (multiraft.Limits, error)"},
		{"method", "ControlQueue.Closed", q, "Closed", "func() bool"},
		{"method", "ControlQueue.FailErr", q, "FailErr", "func() error"},
		{"method", "ControlQueue.Close", q, "Close", "func() error"},
		{"method", "ControlQueue.CloseAndDrain", q, "CloseAndDrain", "func(func(multiraft.Control[int])) error"},
		{"method", "ConfigChange.Resolve", ConfigChange{}, "Resolve", "func() error"},
		{"fields", "Control[int]", Control[int]{}, "", "Kind,Class,Value,ConfigChange"},
	})
	// The refusals' texts, as upstream's wrapped errors read.
	cq, err := NewControlQueue[int](1, Options{Limits: Limits{MaxQueuedControls: 2, MaxQueuedBackgroundControls: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	if err := cq.Admit(ControlPropose, "", 1); err != ErrNotLeader {
		t.Errorf("follower: %v", err)
	}
	_ = cq.SetLeader()
	_ = cq.Admit(ControlPropose, ProposalClassBackground, 1)
	err = cq.Admit(ControlPropose, ProposalClassBackground, 2)
	if err == nil || err.Error() != "multiraft: background proposal throttled: multiraft: proposal backpressure" ||
		!errors.Is(err, ErrBackgroundProposalThrottled) || !errors.Is(err, ErrProposalBackpressure) {
		t.Errorf("throttled: %v", err)
	}
	_ = cq.Admit(ControlPropose, "", 3)
	err = cq.Admit(ControlPropose, "", 4)
	if err == nil || err.Error() != "multiraft: proposal backpressure: multiraft: slot busy" ||
		!errors.Is(err, ErrProposalBackpressure) || !errors.Is(err, ErrSlotBusy) {
		t.Errorf("busy proposal: %v", err)
	}
	if err := cq.Admit(ControlCompactLog, "", 5); err != ErrSlotBusy {
		t.Errorf("busy control: %v", err)
	}
}
