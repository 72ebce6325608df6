package multiraft

import (
	"context"
	"strconv"
)

// ProposalClass is the admission class of a proposal, upstream's string type.
// Any value other than exactly ProposalClassBackground means foreground.
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

func (c ProposalClass) background() bool { return c == ProposalClassBackground }

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

// ControlKind is the kind of a control action queued on a slot, numbered from
// 1 as upstream's controlKind (and the C ABI's enum wk_control_kind).
type ControlKind uint8

// The control kinds.
const (
	ControlPropose ControlKind = iota + 1
	ControlCampaign
	ControlConfigChange
	ControlTransferLeader
	ControlCompactLog
	ControlCaptureHashSlotSnapshot
	ControlFreshStatus
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

// Valid reports whether k is one of the seven kinds.
func (k ControlKind) Valid() bool { return k >= ControlPropose && k <= ControlFreshStatus }

// String returns the kind's snake_case name, or "control_kind(N)" for an
// unknown value.
func (k ControlKind) String() string {
	if k.Valid() {
		return controlKindNames[k]
	}
	return "control_kind(" + strconv.Itoa(int(k)) + ")"
}

// SlotID is a slot's id, upstream's type (uint64). Upstream's package
// aliases it (type SlotID = multiraft.SlotID of this package), so that its
// observers, whose first parameter is a SlotID, implement
// ProposalAdmissionObserver as they are.
type SlotID uint64

// AdmissionResult is the outcome of one proposal admission, as the label
// values of wukongim_slot_proposal_admission_total{result}; observers receive
// it as a string, as upstream's.
type AdmissionResult string

// The admission results. There is no "stopped" result: closed, failed and
// config-change-pending outcomes are not observed or counted, as upstream.
const (
	AdmissionOK        AdmissionResult = "ok"
	AdmissionBusy      AdmissionResult = "busy"
	AdmissionThrottled AdmissionResult = "throttled"
	AdmissionNotLeader AdmissionResult = "not_leader"
)

// ProposalAdmissionObserver is upstream's observer shape: it is called once
// per proposal admission decision (ok, busy, throttled, not_leader), after the
// decision, on the goroutine that asked. A host that already exports
// wukongim_slot_proposal_admission_total passes its own observer here instead
// of registering wkcore's collector. Closed, failed and config-change-pending
// refusals are not observed. An observer must not call back into the same
// queue's admission from inside the call.
//
// The method is upstream's: a SlotID, a ProposalClass and the result as a
// string (one of the AdmissionResult values). A host whose observer names
// its own SlotID and ProposalClass types (not aliased to this package's)
// wraps its method with AdmissionObserverOf.
type ProposalAdmissionObserver interface {
	ObserveSlotProposalAdmission(slotID SlotID, class ProposalClass, result string)
}

// AdmissionObserverOf adapts an observer method of upstream's shape whose
// slot id and class are the host's own types (any unsigned 64-bit and any
// string type), e.g. AdmissionObserverOf(obs.ObserveSlotProposalAdmission).
// A nil observe gives a nil observer (no call, no cost).
func AdmissionObserverOf[S ~uint64, C ~string](observe func(slotID S, class C, result string)) ProposalAdmissionObserver {
	if observe == nil {
		return nil
	}
	return admissionFunc[S, C](observe)
}

type admissionFunc[S ~uint64, C ~string] func(S, C, string)

func (f admissionFunc[S, C]) ObserveSlotProposalAdmission(slotID SlotID, class ProposalClass, result string) {
	f(S(slotID), C(class), result)
}

// Limits are the admission limits of a slot, as upstream's options. Zero means
// the default: MaxQueuedControls 8192, MaxQueuedBackgroundControls half of
// MaxQueuedControls (at least 1), as upstream's normalized options (the
// C ABI and the shared scenario files read 0 the same way). A value above
// MaxLimit is clamped to MaxLimit, the most the queue can hold: upstream
// accepts any positive limit, and a queue of MaxLimit is one no host fills
// (Unlimited says so). A negative value is refused with an error that
// matches ErrInvalidOptions, as upstream's validation does.
type Limits struct {
	// MaxQueuedControls caps the control queue (every kind counts).
	MaxQueuedControls int
	// MaxQueuedBackgroundControls caps the background proposals queued since
	// the items before them were taken.
	MaxQueuedBackgroundControls int
}

// MaxLimit is the largest value either limit takes (1<<25; larger ones are
// clamped to it); it is also the largest batch AdmitBatch passes to the core
// in one call.
const MaxLimit = 1 << 25

// Unlimited is upstream's limit of a slot made without normalized options
// (its 0: no limit), here the most the queue can hold, MaxLimit.
const Unlimited = MaxLimit

// Default limits, upstream's.
const (
	DefaultMaxQueuedControls           = 8192
	DefaultMaxQueuedBackgroundControls = DefaultMaxQueuedControls / 2
)

// DefaultLimits returns the upstream defaults, 8192 and 4096.
func DefaultLimits() Limits {
	return Limits{MaxQueuedControls: DefaultMaxQueuedControls, MaxQueuedBackgroundControls: DefaultMaxQueuedBackgroundControls}
}

// normalize validates l, clamps it to MaxLimit and fills in the defaults.
func (l Limits) normalize() (Limits, error) {
	if l.MaxQueuedControls < 0 || l.MaxQueuedBackgroundControls < 0 {
		return Limits{}, errNegativeLimit
	}
	l.MaxQueuedControls = min(l.MaxQueuedControls, MaxLimit)
	l.MaxQueuedBackgroundControls = min(l.MaxQueuedBackgroundControls, MaxLimit)
	if l.MaxQueuedControls == 0 {
		l.MaxQueuedControls = DefaultMaxQueuedControls
	}
	if l.MaxQueuedBackgroundControls == 0 {
		l.MaxQueuedBackgroundControls = max(l.MaxQueuedControls/2, 1)
	}
	return l, nil
}

// Options configure a ControlQueue. The zero value is valid: default limits,
// no observer, counting in the process-wide metrics registry.
type Options struct {
	// Limits are the queue's limits (zero: upstream's defaults).
	Limits Limits
	// Observer, when not nil, is called after every proposal admission
	// decision. A nil observer costs nothing.
	Observer ProposalAdmissionObserver
	// Metrics is the registry the queue counts its decisions in; nil means
	// the process-wide one (GlobalMetrics), unless DiscardMetrics is set.
	Metrics *MetricsRegistry
	// DiscardMetrics, with a nil Metrics, counts the queue's decisions in a
	// registry no source reads, so a host whose Observer feeds its own
	// admission family leaves the process-wide one untouched. The queue's
	// own Counters still count.
	DiscardMetrics bool
}

// Control is one control action taken from a queue: its kind, its normalized
// class, the host's value, and for a config change the ticket that resolves it.
type Control[T any] struct {
	// Kind is the kind the value was admitted as.
	Kind ControlKind
	// Class is the normalized class it was admitted with.
	Class ProposalClass
	// Value is the host's value.
	Value T
	// ConfigChange resolves the pending config change; it is the zero
	// ConfigChange unless Kind is ControlConfigChange.
	ConfigChange ConfigChange
}

// SlotState is a point-in-time view of a queue.
type SlotState struct {
	// Queued is the number of queued control actions, every kind.
	Queued int
	// QueuedProposals is the number of queued proposals, both classes: zero
	// means no proposal waits in the queue (upstream's ProposalsQuiescent
	// also needs the host's own processing, submitted and pending state). It
	// is never below the truth.
	QueuedProposals int
	// QueuedBackground is the number of queued background proposals (as
	// upstream's counter when drains take everything).
	QueuedBackground int
	// Leader reports whether the slot admits proposals and config changes.
	Leader bool
	// Closed reports whether CloseSlot (or Close) was called.
	Closed bool
	// Failed reports whether Fail recorded an error; FailErr is that error.
	Failed  bool
	FailErr error
	// ConfigChangePending reports an admitted config change not yet resolved.
	ConfigChangePending bool
	// MemoryBytes is the memory the queue holds now (its rings and value
	// storage; grown on demand, kept as a high-water mark).
	MemoryBytes int
}

// AdmissionCounters counts proposal admission decisions by class and result,
// as upstream's ProposalAdmissionObserver sees them.
type AdmissionCounters struct {
	ForegroundOK, ForegroundBusy, ForegroundThrottled, ForegroundNotLeader uint64
	BackgroundOK, BackgroundBusy, BackgroundThrottled, BackgroundNotLeader uint64
}

// Get returns the counter for one class (normalized) and result; an unknown
// result gives 0.
func (c AdmissionCounters) Get(class ProposalClass, result AdmissionResult) uint64 {
	fg := !class.background()
	switch result {
	case AdmissionOK:
		return pick(fg, c.ForegroundOK, c.BackgroundOK)
	case AdmissionBusy:
		return pick(fg, c.ForegroundBusy, c.BackgroundBusy)
	case AdmissionThrottled:
		return pick(fg, c.ForegroundThrottled, c.BackgroundThrottled)
	case AdmissionNotLeader:
		return pick(fg, c.ForegroundNotLeader, c.BackgroundNotLeader)
	}
	return 0
}

func pick(first bool, a, b uint64) uint64 {
	if first {
		return a
	}
	return b
}
