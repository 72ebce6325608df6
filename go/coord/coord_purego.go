//go:build !cgo || wkcore_purego

package coord

// Implementation names the build: "go" here (CGO_ENABLED=0, or the
// wkcore_purego tag), "rust" where the Rust core is linked.
const Implementation = "go"

// Ledger is a bounded ledger of byte-keyed records (see doc.go). In this
// build it is the mutex implementation (mutex_ledger.go), with the same API
// and behaviour as the Rust core's.
type Ledger struct {
	m *mutexLedger
}

// NewLedger creates an empty ledger of cfg.Kind holding at most
// cfg.Capacity records. A capacity out of range or an unknown kind gives
// ErrInvalidCapacity; a closed cfg.Metrics gives ErrHandleClosed.
func NewLedger(cfg LedgerConfig) (*Ledger, error) {
	reg, err := cfg.Metrics.registry()
	if err != nil {
		return nil, err
	}
	m, err := newMutexLedger(cfg, reg)
	if err != nil {
		return nil, err
	}
	return &Ledger{m: m}, nil
}

func (l *Ledger) ok() bool { return l != nil && l.m != nil }

// Insert inserts a PENDING record under key (doc.go).
func (l *Ledger) Insert(key []byte, id, runner, deadline, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Insert(key, id, runner, deadline, now)
}

// Place places one PENDING record holding placeholder per key (doc.go).
func (l *Ledger) Place(keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.m.Place(keys, placeholder, deadline, now, out)
}

// Claim swaps the placeholder of key's placed record for requestID (doc.go).
func (l *Ledger) Claim(key []byte, placeholder, requestID, runner, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Claim(key, placeholder, requestID, runner, now)
}

// Finalize moves key's PENDING record to outcome (doc.go).
func (l *Ledger) Finalize(key []byte, outcome Outcome, payload, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Finalize(key, outcome, payload, now)
}

// FinalizeBatch is Finalize for a batch of keys with one outcome and time.
func (l *Ledger) FinalizeBatch(keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.m.FinalizeBatch(keys, payloads, outcome, now, out)
}

// Take removes key's PENDING record if its id is expectedID (doc.go).
func (l *Ledger) Take(key []byte, expectedID uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Take(key, expectedID)
}

// Touch is runner's heartbeat on key's PENDING record (doc.go).
func (l *Ledger) Touch(key []byte, runner, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Touch(key, runner, now)
}

// Reconcile times out the due PENDING records of the next limit slots.
func (l *Ledger) Reconcile(now uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.Reconcile(now, limit)
}

// Reclaim frees the terminal records past their retention of the next
// limit slots.
func (l *Ledger) Reclaim(now uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.Reclaim(now, limit)
}

// FinalizeOwn finalizes with outcome the PENDING records of the next limit
// slots that name runner.
func (l *Ledger) FinalizeOwn(runner uint64, outcome Outcome, now uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.FinalizeOwn(runner, outcome, now, limit)
}

// SweepOrphans finalizes as OutcomeOrphaned the PENDING records of the next
// limit slots whose runner has been quiet for quiet.
func (l *Ledger) SweepOrphans(now, quiet uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.SweepOrphans(now, quiet, limit)
}

// Get returns a moment's view of key's record; false when there is none.
func (l *Ledger) Get(key []byte) (Record, bool, error) {
	if !l.ok() {
		return Record{}, false, ErrHandleClosed
	}
	return l.m.Get(key)
}

// Len returns the records held (PENDING and retained).
func (l *Ledger) Len() (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.m.Len()
}

// Counts returns the ledger's event counters.
func (l *Ledger) Counts() (Counts, error) {
	if !l.ok() {
		return Counts{}, ErrHandleClosed
	}
	return l.m.Counts()
}

// Close releases the ledger; its metric series keep their counts. A second
// Close returns ErrHandleClosed.
func (l *Ledger) Close() error {
	if !l.ok() {
		return ErrHandleClosed
	}
	return l.m.Close()
}

// HandoffLedger is the shard hand-off ledger, keyed by HandoffKey (doc.go).
// In this build it is the mutex implementation.
type HandoffLedger struct {
	m *mutexHandoffLedger
}

// NewHandoffLedger creates an empty hand-off ledger of at most cfg.Capacity
// records (ErrInvalidCapacity out of range; ErrHandleClosed for a closed
// cfg.Metrics).
func NewHandoffLedger(cfg HandoffConfig) (*HandoffLedger, error) {
	reg, err := cfg.Metrics.registry()
	if err != nil {
		return nil, err
	}
	m, err := newMutexHandoffLedger(cfg, reg)
	if err != nil {
		return nil, err
	}
	return &HandoffLedger{m: m}, nil
}

func (l *HandoffLedger) ok() bool { return l != nil && l.m != nil }

// Claim claims the hand-off key: the first claim wins (doc.go).
func (l *HandoffLedger) Claim(key HandoffKey, deadline, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Claim(key, deadline, now)
}

// ClaimBatch is Claim for a batch of keys; it returns how many won.
func (l *HandoffLedger) ClaimBatch(keys []HandoffKey, deadline, now uint64, out []Decision) (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.m.ClaimBatch(keys, deadline, now, out)
}

// Complete completes the hand-off key with outcome (doc.go).
func (l *HandoffLedger) Complete(key HandoffKey, outcome Outcome, now uint64) (Decision, error) {
	if !l.ok() {
		return Decision{}, ErrHandleClosed
	}
	return l.m.Complete(key, outcome, now)
}

// Reconcile times out the due hand-offs of the next limit slots.
func (l *HandoffLedger) Reconcile(now uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.Reconcile(now, limit)
}

// Reclaim frees the hand-offs past their retention of the next limit slots.
func (l *HandoffLedger) Reclaim(now uint64, limit int) (Page, error) {
	if !l.ok() {
		return Page{}, ErrHandleClosed
	}
	return l.m.Reclaim(now, limit)
}

// Get returns a moment's view of the hand-off key; false when there is none.
func (l *HandoffLedger) Get(key HandoffKey) (Record, bool, error) {
	if !l.ok() {
		return Record{}, false, ErrHandleClosed
	}
	return l.m.Get(key)
}

// Len returns the hand-offs held.
func (l *HandoffLedger) Len() (int, error) {
	if !l.ok() {
		return 0, ErrHandleClosed
	}
	return l.m.Len()
}

// Counts returns the ledger's event counters.
func (l *HandoffLedger) Counts() (Counts, error) {
	if !l.ok() {
		return Counts{}, ErrHandleClosed
	}
	return l.m.Counts()
}

// Close releases the ledger. A second Close returns ErrHandleClosed.
func (l *HandoffLedger) Close() error {
	if !l.ok() {
		return ErrHandleClosed
	}
	return l.m.Close()
}

// AnchorTable holds scheduled-trigger anchors by id (doc.go). In this build
// it is the mutex implementation.
type AnchorTable struct {
	m *mutexAnchorTable
}

// NewAnchorTable creates an empty table of at most capacity anchors
// (1..AnchorTableCapacityMax, else ErrInvalidCapacity).
func NewAnchorTable(capacity int) (*AnchorTable, error) {
	m, err := newMutexAnchorTable(capacity)
	if err != nil {
		return nil, err
	}
	return &AnchorTable{m: m}, nil
}

func (t *AnchorTable) ok() bool { return t != nil && t.m != nil }

// Insert adds trigger id anchored at value (TimeUnset: unset).
func (t *AnchorTable) Insert(id, value uint64) error {
	if !t.ok() {
		return ErrHandleClosed
	}
	return t.m.Insert(id, value)
}

// Remove removes trigger id.
func (t *AnchorTable) Remove(id uint64) error {
	if !t.ok() {
		return ErrHandleClosed
	}
	return t.m.Remove(id)
}

// TryFire decides whether trigger id fires at now with period (doc.go).
func (t *AnchorTable) TryFire(id, now, period uint64) (Fire, error) {
	if !t.ok() {
		return Fire{}, ErrHandleClosed
	}
	return t.m.TryFire(id, now, period)
}

// Advance advances trigger id from expected to next; true for the one caller
// that did.
func (t *AnchorTable) Advance(id, expected, next uint64) (bool, error) {
	if !t.ok() {
		return false, ErrHandleClosed
	}
	return t.m.Advance(id, expected, next)
}

// AnchorUnset anchors an unset trigger id at now without firing; true for
// the one caller that did.
func (t *AnchorTable) AnchorUnset(id, now uint64) (bool, error) {
	if !t.ok() {
		return false, ErrHandleClosed
	}
	return t.m.AnchorUnset(id, now)
}

// Get returns trigger id's anchor, TimeUnset while unset.
func (t *AnchorTable) Get(id uint64) (uint64, error) {
	if !t.ok() {
		return 0, ErrHandleClosed
	}
	return t.m.Get(id)
}

// Len returns the anchors held.
func (t *AnchorTable) Len() (int, error) {
	if !t.ok() {
		return 0, ErrHandleClosed
	}
	return t.m.Len()
}

// Close releases the table. A second Close returns ErrHandleClosed.
func (t *AnchorTable) Close() error {
	if !t.ok() {
		return ErrHandleClosed
	}
	return t.m.Close()
}
