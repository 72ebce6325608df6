package multiraft_test

// The upstream-visible surface of the package, name by name: upstream's
// pkg/slot/multiraft names a host keeps (sentinels and texts, the proposal
// class, the observer) and the calls the WuKongIM edit of docs/GO.md makes.
// A change to any fails here. WK_API_DUMP=1 prints what is.

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	. "github.com/wukongim/wkcore/go/multiraft"
)

// surfaceOf describes one upstream-visible name: a func's or method's
// signature (methods without their receiver), a struct field's type and
// tag, a constant's value, an error's text.
func surfaceOf(kind string, v any, member string) string {
	switch kind {
	case "func":
		return reflect.TypeOf(v).String()
	case "method":
		t, iface := v.(reflect.Type)
		if !iface {
			t = reflect.TypeOf(v)
		}
		m, ok := t.MethodByName(member)
		if !ok {
			return "missing"
		}
		ft := m.Type
		first := 1
		if iface {
			first = 0 // an interface's methods have no receiver
		}
		var ins, outs []string
		for i := first; i < ft.NumIn(); i++ {
			ins = append(ins, ft.In(i).String())
		}
		for i := 0; i < ft.NumOut(); i++ {
			outs = append(outs, ft.Out(i).String())
		}
		s := "func(" + strings.Join(ins, ", ") + ")"
		switch len(outs) {
		case 0:
		case 1:
			s += " " + outs[0]
		default:
			s += " (" + strings.Join(outs, ", ") + ")"
		}
		return s
	case "field":
		t := reflect.TypeOf(v)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f, ok := t.FieldByName(member)
		if !ok || !f.IsExported() {
			return "missing"
		}
		if f.Tag != "" {
			return f.Type.String() + " `" + string(f.Tag) + "`"
		}
		return f.Type.String()
	case "fields":
		t := reflect.TypeOf(v)
		var names []string
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				names = append(names, t.Field(i).Name)
			}
		}
		return strings.Join(names, ",")
	case "error":
		return v.(error).Error()
	case "value":
		return fmt.Sprint(v)
	case "type":
		return reflect.TypeOf(v).Elem().Kind().String() + " " + reflect.TypeOf(v).Elem().String()
	}
	return "unknown kind " + kind
}

type surfaceCase struct {
	kind, name string
	v          any
	member     string
	want       string
}

func checkSurface(t *testing.T, cases []surfaceCase) {
	t.Helper()
	dump := os.Getenv("WK_API_DUMP") != ""
	for _, c := range cases {
		got := surfaceOf(c.kind, c.v, c.member)
		if dump {
			fmt.Printf("%s %s = %q\n", c.kind, c.name, got)
			continue
		}
		if got != c.want {
			t.Errorf("%s %s: %q, want %q", c.kind, c.name, got, c.want)
		}
	}
}

func TestAPISurface(t *testing.T) {
	q := (*ControlQueue[int])(nil)
	checkSurface(t, []surfaceCase{
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
