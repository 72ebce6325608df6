package wkcore

import (
	"errors"
	"testing"
)

func TestSentinelTexts(t *testing.T) {
	for err, text := range map[error]string{
		ErrSlotClosed:                  "multiraft: slot closed",
		ErrNotLeader:                   "multiraft: not leader",
		ErrSlotBusy:                    "multiraft: slot busy",
		ErrProposalBackpressure:        "multiraft: proposal backpressure",
		ErrBackgroundProposalThrottled: "multiraft: background proposal throttled",
		ErrConfigChangePending:         "multiraft: config change pending",
	} {
		if err.Error() != text {
			t.Errorf("%q, want %q", err.Error(), text)
		}
	}
}

// The whole status table, including statuses the Go API cannot provoke.
func TestErrorForStatusMatrix(t *testing.T) {
	all := []error{
		ErrSlotClosed, ErrNotLeader, ErrSlotBusy, ErrProposalBackpressure,
		ErrBackgroundProposalThrottled, ErrConfigChangePending, ErrInvalidArgument,
		ErrNullArgument, ErrPanic, ErrHandleClosed, ErrNotFound, ErrAlreadyExists, ErrBufferTooSmall,
	}
	cases := []struct {
		status Status
		kind   ControlKind
		text   string
		is     []error
	}{
		{StatusNullArgument, 0, "wkcore: null argument", []error{ErrNullArgument}},
		{StatusInvalidArgument, ControlPropose, "wkcore: invalid argument", []error{ErrInvalidArgument}},
		{StatusPanic, 0, "wkcore: panic in library", []error{ErrPanic}},
		{StatusClosed, ControlPropose, "multiraft: slot closed", []error{ErrSlotClosed}},
		{StatusFatal, ControlPropose, "wkcore: slot failed with fatal code 0", nil},
		{StatusNotLeader, ControlPropose, "multiraft: not leader", []error{ErrNotLeader}},
		{StatusNotLeader, ControlConfigChange, "multiraft: not leader", []error{ErrNotLeader}},
		{StatusConfigChangePending, ControlConfigChange, "multiraft: config change pending", []error{ErrConfigChangePending}},
		{StatusBusy, ControlPropose, "multiraft: proposal backpressure: multiraft: slot busy",
			[]error{ErrProposalBackpressure, ErrSlotBusy}},
		{StatusBusy, ControlTransferLeader, "multiraft: slot busy", []error{ErrSlotBusy}},
		{StatusBusy, ControlConfigChange, "multiraft: slot busy", []error{ErrSlotBusy}},
		{StatusBusy, 0, "multiraft: slot busy", []error{ErrSlotBusy}},
		{StatusThrottled, ControlPropose, "multiraft: background proposal throttled: multiraft: proposal backpressure",
			[]error{ErrBackgroundProposalThrottled, ErrProposalBackpressure}},
		{StatusBufferTooSmall, 0, "wkcore: buffer too small", []error{ErrBufferTooSmall}},
		{StatusNotFound, 0, "wkcore: not found", []error{ErrNotFound}},
		{StatusAlreadyExists, 0, "wkcore: already exists", []error{ErrAlreadyExists}},
	}
	for _, c := range cases {
		err := errorForStatus(c.status, c.kind)
		if err == nil || err.Error() != c.text {
			t.Errorf("%v/%v: %v, want %q", c.status, c.kind, err, c.text)
			continue
		}
		for _, target := range all {
			want := false
			for _, w := range c.is {
				want = want || w == target
			}
			if got := errors.Is(err, target); got != want {
				t.Errorf("%v/%v: errors.Is(%q, %q) = %v, want %v", c.status, c.kind, err, target, got, want)
			}
		}
	}
	if err := errorForStatus(StatusOK, ControlPropose); err != nil {
		t.Errorf("StatusOK: %v", err)
	}
	var fe FatalError
	if !errors.As(errorForStatus(StatusFatal, ControlPropose), &fe) {
		t.Error("StatusFatal is not a FatalError")
	}
	if err := errorForStatus(Status(99), 0); err == nil || err.Error() != "wkcore: unexpected status 99 (unknown status)" {
		t.Errorf("unknown status: %v", err)
	}
}

func TestStatusString(t *testing.T) {
	// The names come from the library; they must be distinct and known.
	seen := map[string]Status{}
	for s := StatusOK; s <= StatusAlreadyExists; s++ {
		name := s.String()
		if name == "" || name == "unknown status" {
			t.Errorf("Status(%d).String() = %q", s, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("Status %d and %d share the name %q", prev, s, name)
		}
		seen[name] = s
	}
	if got := Status(1000).String(); got != "unknown status" {
		t.Errorf("Status(1000) = %q", got)
	}
}
