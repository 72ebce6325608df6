package wkcore

/*
#include "wkcore.h"
*/
import "C"

import (
	"context"
	"strconv"
)

// ProposalClass is the admission class of a proposal, as upstream multiraft's
// string type. Any value other than exactly ProposalClassBackground means
// foreground.
type ProposalClass string

const (
	// ProposalClassForeground is the default class, for user-facing writes.
	ProposalClassForeground ProposalClass = "foreground"
	// ProposalClassBackground is for retryable projection and maintenance
	// writes; it has its own cap, which leaves a reserve for foreground.
	ProposalClassBackground ProposalClass = "background"
)

// Normalize returns ProposalClassBackground for exactly "background" and
// ProposalClassForeground for anything else, "" and unknown strings included.
func (c ProposalClass) Normalize() ProposalClass {
	if c == ProposalClassBackground {
		return ProposalClassBackground
	}
	return ProposalClassForeground
}

// raw is the class as the C ABI takes it.
func (c ProposalClass) raw() C.uint32_t {
	if c == ProposalClassBackground {
		return C.WK_PROPOSAL_CLASS_BACKGROUND
	}
	return C.WK_PROPOSAL_CLASS_FOREGROUND
}

// proposalClassFromRaw maps the C value back: 1 is background, anything else
// foreground.
func proposalClassFromRaw(raw uint8) ProposalClass {
	if raw == C.WK_PROPOSAL_CLASS_BACKGROUND {
		return ProposalClassBackground
	}
	return ProposalClassForeground
}

type proposalClassKey struct{}

// WithProposalClass returns a copy of ctx that carries the normalized class.
// A nil ctx is treated as context.Background().
func WithProposalClass(ctx context.Context, class ProposalClass) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, proposalClassKey{}, class.Normalize())
}

// ProposalClassFromContext returns the class stored by WithProposalClass,
// normalized; it is ProposalClassForeground for a nil ctx or one without a
// class.
func ProposalClassFromContext(ctx context.Context) ProposalClass {
	if ctx == nil {
		return ProposalClassForeground
	}
	class, _ := ctx.Value(proposalClassKey{}).(ProposalClass)
	return class.Normalize()
}

// ControlKind is the kind of a control action queued on a slot, numbered as
// upstream's controlKind.
type ControlKind uint8

// The control kinds; values are the C ABI's enum wk_control_kind.
const (
	ControlPropose                 ControlKind = C.WK_CONTROL_KIND_PROPOSE
	ControlCampaign                ControlKind = C.WK_CONTROL_KIND_CAMPAIGN
	ControlConfigChange            ControlKind = C.WK_CONTROL_KIND_CONFIG_CHANGE
	ControlTransferLeader          ControlKind = C.WK_CONTROL_KIND_TRANSFER_LEADER
	ControlCompactLog              ControlKind = C.WK_CONTROL_KIND_COMPACT_LOG
	ControlCaptureHashSlotSnapshot ControlKind = C.WK_CONTROL_KIND_CAPTURE_HASH_SLOT_SNAPSHOT
	ControlFreshStatus             ControlKind = C.WK_CONTROL_KIND_FRESH_STATUS
)

var controlKindNames = [...]string{
	ControlPropose:                 "propose",
	ControlCampaign:                "campaign",
	ControlConfigChange:            "config_change",
	ControlTransferLeader:          "transfer_leader",
	ControlCompactLog:              "compact_log",
	ControlCaptureHashSlotSnapshot: "capture_hash_slot_snapshot",
	ControlFreshStatus:             "fresh_status",
}

// String returns the kind's snake_case name, or "control_kind(N)" for an
// unknown value.
func (k ControlKind) String() string {
	if int(k) < len(controlKindNames) && controlKindNames[k] != "" {
		return controlKindNames[k]
	}
	return "control_kind(" + strconv.Itoa(int(k)) + ")"
}

// AdmissionResult is the outcome of one proposal admission, as the label
// values of wukongim_slot_proposal_admission_total{result}.
type AdmissionResult string

// The admission results. There is no "stopped" result: closed, fatal and
// config-change-pending outcomes are not counted.
const (
	AdmissionOK        AdmissionResult = "ok"
	AdmissionBusy      AdmissionResult = "busy"
	AdmissionThrottled AdmissionResult = "throttled"
	AdmissionNotLeader AdmissionResult = "not_leader"
)
