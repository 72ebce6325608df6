package mqttsession

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Key is a broker-scoped ClientID, independent of user/device conflict
// policy (upstream's contract.Key).
type Key struct {
	Namespace string `json:"namespace"`
	ClientID  string `json:"client_id"`
}

// Validate returns ErrInvalidIdentity unless both parts are valid identities
// of at most IdentityMax bytes.
func (k Key) Validate() error {
	if !ValidIdentity(k.Namespace, IdentityMax) || !ValidIdentity(k.ClientID, IdentityMax) {
		return ErrInvalidIdentity
	}
	return nil
}

// Owner identifies one immutable execution incarnation (upstream's
// contract.Owner). ConnectionID is issued by the registry, never by the
// client or restored from a previous boot. Owners compare with ==: an owner
// that differs in any field is another owner.
type Owner struct {
	Key Key `json:"key"`
	// SessionGeneration is the durable subscription/cursor lifetime.
	SessionGeneration uint64 `json:"session_generation"`
	// OwnerGeneration changes for every committed connection takeover.
	OwnerGeneration uint64 `json:"owner_generation"`
	NodeID          uint64 `json:"node_id"`
	// BootID changes whenever the owner registry is reconstructed.
	BootID       string `json:"boot_id"`
	ConnectionID uint64 `json:"connection_id"`
}

// Validate returns ErrInvalidIdentity unless the key is valid, every id is
// non-zero and the boot id is a valid identity of at most BootIDMax bytes.
func (o Owner) Validate() error {
	if o.Key.Validate() != nil || o.SessionGeneration == 0 || o.OwnerGeneration == 0 || o.NodeID == 0 ||
		!ValidIdentity(o.BootID, BootIDMax) || o.ConnectionID == 0 {
		return ErrInvalidIdentity
	}
	return nil
}

// The identity bounds, in bytes.
const (
	// IdentityMax bounds a namespace, a client id and a UID.
	IdentityMax = 1024
	// BootIDMax bounds a boot id.
	BootIDMax = 128
)

// ValidIdentity reports whether s is 1..limit bytes of UTF-8, has no NUL and
// is not only white space (upstream's contract.ValidIdentity).
func ValidIdentity(s string, limit int) bool {
	return len(s) > 0 && len(s) <= limit && utf8.ValidString(s) && !strings.ContainsRune(s, 0) &&
		strings.TrimSpace(s) != ""
}

// Claim contains an already authenticated identity and the proposed durable
// generations. Reserve does not establish that authentication or commit
// Session ownership.
type Claim struct {
	Key               Key
	UID               string
	SessionGeneration uint64
	OwnerGeneration   uint64
}

func (c Claim) valid() bool {
	return c.Key.Validate() == nil && ValidIdentity(c.UID, IdentityMax) && c.SessionGeneration != 0 &&
		c.OwnerGeneration != 0
}

// CloseTransport must seal all future socket writes and close the physical
// connection before returning nil. It must obey cancellation and must not
// wait for the registry's business cleanup or call Quiesce recursively. It
// runs synchronously on the goroutine that called Quiesce (or Sweep, Close).
type CloseTransport func(context.Context) error

// The registry bounds (upstream's NewOwners checks).
const (
	CapacityMax      = 1_000_000
	MaxOperationsMax = 1024
	DurationMax      = time.Minute
	// SweepLimitMax bounds one Sweep (and an OwnerSweeper's Limit).
	SweepLimitMax = 256
	// closePage is how many owners Close quiesces per page.
	closePage = 256
)

// OwnerOptions bounds retained owners, admitted work and local lease
// horizons. There are no defaults but Now (time.Now).
type OwnerOptions struct {
	// NodeID is this node (non-zero).
	NodeID uint64
	// BootID must be unique to this process and registry lifetime
	// (ValidIdentity(BootID, 128)).
	BootID string
	// Capacity includes pending and closing owners, not just active
	// connections (1..1_000_000).
	Capacity int
	// MaxOperations bounds admitted scopes per owner; there is no waiting
	// queue (1..1024).
	MaxOperations int
	// PendingTimeout bounds incomplete local reservations before activation
	// (0 < d ≤ 1m).
	PendingTimeout time.Duration
	// MaxLease bounds the accepted local execution horizon (0 < d ≤ 1m).
	MaxLease time.Duration
	// CloseRetry delays failed/unfinished cleanup without reopening
	// admission (0 < d ≤ 1m).
	CloseRetry time.Duration
	// Now and all supplied deadlines use this process's monotonic time base:
	// Now must return a time with a monotonic reading.
	Now func() time.Time
}

// resolve fills in Now and checks upstream's bounds.
func (o OwnerOptions) resolve() (OwnerOptions, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	inRange := func(d time.Duration) bool { return d > 0 && d <= DurationMax }
	if o.NodeID == 0 || !ValidIdentity(o.BootID, BootIDMax) || o.Capacity < 1 || o.Capacity > CapacityMax ||
		o.MaxOperations < 1 || o.MaxOperations > MaxOperationsMax || !inRange(o.PendingTimeout) ||
		!inRange(o.MaxLease) || !inRange(o.CloseRetry) {
		return o, ErrOwnerInvalid
	}
	if !monotonic(o.Now()) {
		return o, ErrOwnerInvalid
	}
	return o, nil
}

// monotonic reports whether t carries a monotonic clock reading.
func monotonic(t time.Time) bool { return t != t.Round(0) }

// OwnerSnapshot contains bounded aggregate diagnostics without owner
// identities.
type OwnerSnapshot struct {
	Held, Pending, Active, Closing, Operations, Deadlines, Uncertain int
	Stopped                                                          bool
}

// RetiredBoot is the proof, minted only by a stopped registry that holds no
// owner (Owners.Retirement), that a boot of a node holds no owner any more;
// the host records its Identity durably so a later boot can answer for that
// one's owners (through a RetiredOwners of its own). Its fields are
// unexported, as upstream's: only Retirement mints one, and its zero value
// proves nothing (no owner has node 0).
type RetiredBoot struct {
	nodeID, lastConnectionID uint64
	bootID                   string
}

// Identity returns the boot and the inclusive issued-id bound, for durable
// recording (upstream's accessor).
func (p RetiredBoot) Identity() (nodeID uint64, bootID string, lastConnectionID uint64) {
	return p.nodeID, p.bootID, p.lastConnectionID
}

// Covers reports whether the proof covers owner: the same node and boot, and
// an id the boot issued (beyond upstream).
func (p RetiredBoot) Covers(owner Owner) bool {
	return p.nodeID != 0 && owner.NodeID == p.nodeID && owner.BootID == p.bootID &&
		owner.ConnectionID <= p.lastConnectionID
}

// RetiredOwners proves the quiescence of another boot's owners from explicit,
// immutable retirement facts (upstream's interface). Missing facts,
// unrecognised formats and uncertainty must fail closed (an error).
type RetiredOwners interface {
	Quiesce(context.Context, Owner) error
}

// RetiredBoots is a RetiredOwners over proofs held in memory (beyond
// upstream): an owner covered by one of them is quiescent, any other is
// ErrOwnerUnknown.
type RetiredBoots []RetiredBoot

// Quiesce returns ctx's error for an owner a proof covers (nil while ctx
// lives), else ErrOwnerUnknown.
func (b RetiredBoots) Quiesce(ctx context.Context, o Owner) error {
	for _, p := range b {
		if p.Covers(o) {
			if ctx == nil {
				return ErrOwnerInvalid
			}
			return ctx.Err()
		}
	}
	return ErrOwnerUnknown
}

// Isolation combines the current registry with the proved retirements of
// this node's older boots. It never falls back to a proof after a failure of
// the current boot's registry.
type Isolation struct {
	Owners  *Owners
	Retired RetiredOwners
}

// Quiesce proves owner isolated: ErrOwnerInvalid without a registry, with a
// nil ctx or a malformed owner; ctx's error; ErrOwnerUnknown for another
// node; this boot's owners are quiesced by the registry; another boot's are
// asked of Retired (ErrOwnerUnknown when it is nil), whose error is
// returned as is, else ctx's error.
func (i Isolation) Quiesce(ctx context.Context, o Owner) error {
	if i.Owners == nil || ctx == nil || o.Validate() != nil {
		return ErrOwnerInvalid
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	nodeID, bootID := i.Owners.identity()
	if o.NodeID != nodeID {
		return ErrOwnerUnknown
	}
	if o.BootID == bootID {
		return i.Owners.Quiesce(ctx, o)
	}
	if i.Retired == nil {
		return ErrOwnerUnknown
	}
	if err := i.Retired.Quiesce(ctx, o); err != nil {
		return err
	}
	return ctx.Err()
}
