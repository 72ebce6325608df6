package coord

import (
	"strings"
	"sync"
	"unsafe"
)

// The mutex implementation of the coordination contract: a map and a slab of
// slots under one mutex. It is the pure-Go build's Ledger, HandoffLedger and
// AnchorTable (*_purego.go) and, in every build, the baseline the benchmarks
// put beside the Rust core. Its behaviour is the core's, decision for
// decision and count for count, so the same scenario file replays on both:
//
//   - Bounded: capacity slots allocated up front; with none free an insert is
//     ResultFull and nothing is evicted. Place reserves a slot per key first
//     and places nothing if they do not all fit.
//   - Slot order: records fill slots 0, 1, 2, … in insertion order; a freed
//     slot goes on top of a free stack, so the most recently freed slot is
//     reused first (Place gives back the slots it reserved in the order it
//     reserved them, as the core's free list does).
//   - Scans: each scan (reconcile, reclaim, finalize-own, orphan sweep) has
//     its own cursor; a page is min(limit, capacity) slots from the cursor,
//     wrapping, and Wrapped says the page crossed the end of the slab.
//   - Counting: the core's rules (a claim that does not win counts lost, a
//     not-found finalization counts nothing, a Take that wins counts one
//     finalization won and one reclaimed, a Place refused as full counts one
//     rejection per key, a hand-off insert counts a claim won or lost).
//   - Argument checks in the C ABI's order, so a call with two bad arguments
//     gets the same error from both.

const (
	phaseFree uint8 = iota
	phasePlaced
	phaseClaimed
	phaseFinal
)

type mslot[K comparable] struct {
	phase       uint8
	outcome     Outcome
	key         K
	id          uint64
	runner      uint64
	deadline    uint64
	refreshedAt uint64
	finalizedAt uint64
	payload     uint64
	duplicates  uint64
	dupPayload  uint64
}

// The scans, each with its cursor.
const (
	scanReconcile = iota
	scanReclaim
	scanRunner
	scanOrphan
	scanCount
)

// ledgerCore is the algorithm, keyed by K (string for byte keys, HandoffKey
// for hand-offs). The caller holds mu around every method and has checked
// the arguments.
type ledgerCore[K comparable] struct {
	mu        sync.Mutex
	closed    bool
	label     ledgerLabel
	retention uint64
	slots     []mslot[K]
	index     map[K]int32
	free      []int32 // a stack: the top is the last element
	cursors   [scanCount]uint64
	counts    eventCounts
	registry  *goRegistry
	// own copies a key the caller lent (a byte key viewed as a string) into
	// one the ledger may keep.
	own func(K) K
}

func (c *ledgerCore[K]) init(label ledgerLabel, capacity int, retention uint64, registry *goRegistry, own func(K) K) {
	c.label, c.retention, c.registry, c.own = label, retention, registry, own
	c.slots = make([]mslot[K], capacity)
	c.index = make(map[K]int32, min(capacity, 1<<12))
	c.free = make([]int32, capacity)
	for i := range c.free {
		c.free[i] = int32(capacity - 1 - i)
	}
	registry.used.Store(true)
}

func (c *ledgerCore[K]) count(ev event, n uint64) {
	if n != 0 {
		c.counts[ev] += n
		c.registry.add(c.label, ev, n)
	}
}

func (c *ledgerCore[K]) pop() (int32, bool) {
	n := len(c.free)
	if n == 0 {
		return 0, false
	}
	s := c.free[n-1]
	c.free = c.free[:n-1]
	return s, true
}

func (c *ledgerCore[K]) push(s int32) { c.free = append(c.free, s) }

// state is the state of a held slot.
func (s *mslot[K]) state() State {
	switch s.phase {
	case phasePlaced:
		return StatePlaced
	case phaseClaimed:
		return StateClaimed
	case phaseFinal:
		return StateFinalized
	}
	return StateNone
}

// found is the Decision of a loser that found slot s.
func (s *mslot[K]) found(r Result) Decision {
	d := Decision{Result: r, State: s.state()}
	if s.phase == phaseFinal {
		d.Outcome = s.outcome
	}
	return d
}

// exists is the Decision of an insert that found slot s holding its key:
// lost while PENDING, a duplicate once terminal.
func (s *mslot[K]) exists() Decision {
	if s.phase == phaseFinal {
		return s.found(ResultDuplicate)
	}
	return s.found(ResultLost)
}

func (c *ledgerCore[K]) fill(slot int32, key K, id, runner, deadline, now uint64) {
	c.slots[slot] = mslot[K]{phase: phasePlaced, key: key, id: id, runner: runner, deadline: deadline,
		refreshedAt: now, finalizedAt: TimeUnset}
	c.index[key] = slot
}

func (c *ledgerCore[K]) freeSlot(slot int32) {
	delete(c.index, c.slots[slot].key)
	c.slots[slot] = mslot[K]{}
	c.push(slot)
}

// insert is the core's insert: the first insert of a key wins.
func (c *ledgerCore[K]) insert(key K, id, runner, deadline, now uint64) Decision {
	var d Decision
	if slot, ok := c.index[key]; ok {
		d = c.slots[slot].exists()
	} else if slot, ok := c.pop(); ok {
		c.fill(slot, c.own(key), id, runner, deadline, now)
		d = Decision{Result: ResultWon, State: StatePlaced}
	} else {
		c.count(evRejectedFull, 1)
		return Decision{Result: ResultFull}
	}
	if c.label == labelHandoff {
		if d.Result == ResultWon {
			c.count(evClaimWon, 1)
		} else {
			c.count(evClaimLost, 1)
		}
	}
	return d
}

// place reserves a slot per key (all or nothing), then places each key
// absent; a key present gives its reserved slot back.
func (c *ledgerCore[K]) place(keys []K, placeholder, deadline, now uint64, out []Decision) int {
	var buf [64]int32
	reserved := buf[:0]
	if len(keys) > len(buf) {
		reserved = make([]int32, 0, len(keys))
	}
	for range keys {
		s, ok := c.pop()
		if !ok {
			// The core pushes what it popped back, in the order popped.
			for _, s := range reserved {
				c.push(s)
			}
			c.count(evRejectedFull, uint64(len(keys)))
			for i := range out {
				out[i] = Decision{Result: ResultFull}
			}
			return 0
		}
		reserved = append(reserved, s)
	}
	// The spare slots overwrite reserved from the front: the j-th spare is
	// written at j <= i, after reserved[i] was read.
	spare := reserved[:0]
	placed := 0
	for i, key := range keys {
		slot := reserved[i]
		if at, ok := c.index[key]; ok {
			out[i] = c.slots[at].exists()
			spare = append(spare, slot)
			continue
		}
		c.fill(slot, c.own(key), placeholder, 0, deadline, now)
		out[i] = Decision{Result: ResultWon, State: StatePlaced}
		placed++
	}
	for _, s := range spare {
		c.push(s)
	}
	return placed
}

func (c *ledgerCore[K]) claim(key K, placeholder, requestID, runner, now uint64) Decision {
	d := c.claimInner(key, placeholder, requestID, runner, now)
	if d.Result == ResultWon {
		c.count(evClaimWon, 1)
	} else {
		c.count(evClaimLost, 1)
	}
	return d
}

func (c *ledgerCore[K]) claimInner(key K, placeholder, requestID, runner, now uint64) Decision {
	slot, ok := c.index[key]
	if !ok {
		return Decision{Result: ResultNotFound}
	}
	s := &c.slots[slot]
	switch s.phase {
	case phaseClaimed:
		return Decision{Result: ResultLost, State: StateClaimed}
	case phaseFinal:
		return s.found(ResultDuplicate)
	}
	if s.id != placeholder {
		return Decision{Result: ResultMismatch, State: StatePlaced}
	}
	s.phase = phaseClaimed
	s.refreshedAt, s.runner, s.id = now, runner, requestID
	return Decision{Result: ResultWon, State: StateClaimed}
}

func (s *mslot[K]) finalize(outcome Outcome, payload, now uint64) {
	s.phase, s.outcome = phaseFinal, outcome
	s.payload, s.finalizedAt = payload, now
}

// finalizeInner is the pending-only transition of one key, uncounted.
func (c *ledgerCore[K]) finalizeInner(key K, outcome Outcome, payload, now uint64) Decision {
	slot, ok := c.index[key]
	if !ok {
		return Decision{Result: ResultNotFound}
	}
	s := &c.slots[slot]
	if s.phase == phaseFinal {
		s.duplicates++
		s.dupPayload = payload
		return s.found(ResultDuplicate)
	}
	s.finalize(outcome, payload, now)
	return Decision{Result: ResultWon, State: StateFinalized, Outcome: outcome}
}

func (c *ledgerCore[K]) finalize(key K, outcome Outcome, payload, now uint64) Decision {
	d := c.finalizeInner(key, outcome, payload, now)
	switch d.Result {
	case ResultWon:
		c.count(evFinalizeWon, 1)
	case ResultDuplicate:
		c.count(evFinalizeDuplicate, 1)
	}
	return d
}

func (c *ledgerCore[K]) take(key K, expectedID uint64) Decision {
	slot, ok := c.index[key]
	if !ok {
		return Decision{Result: ResultNotFound}
	}
	s := &c.slots[slot]
	if s.phase == phaseFinal {
		return s.found(ResultDuplicate)
	}
	if s.id != expectedID {
		// The state as found, as the C ABI's decision promises.
		return s.found(ResultMismatch)
	}
	c.freeSlot(slot)
	c.count(evFinalizeWon, 1)
	c.count(evReclaimed, 1)
	return Decision{Result: ResultWon}
}

func (c *ledgerCore[K]) touch(key K, runner, now uint64) Decision {
	slot, ok := c.index[key]
	if !ok {
		return Decision{Result: ResultNotFound}
	}
	s := &c.slots[slot]
	if s.phase == phaseFinal {
		return s.found(ResultDuplicate)
	}
	if s.runner != runner {
		// The state as found, as the C ABI's decision promises.
		return s.found(ResultMismatch)
	}
	s.refreshedAt = max(s.refreshedAt, now)
	// The PENDING state it refreshed.
	return s.found(ResultWon)
}

// scan runs f on each slot of the next page of one scan; f reports whether
// it changed the slot.
func (c *ledgerCore[K]) scan(which int, limit int, f func(slot int32, s *mslot[K]) bool) Page {
	n := uint64(len(c.slots))
	l := min(uint64(limit), n)
	start := c.cursors[which]
	c.cursors[which] += l
	p := Page{Scanned: int(l), Wrapped: l > 0 && (start+l)/n > start/n}
	for i := uint64(0); i < l; i++ {
		slot := int32((start%n + i) % n)
		if f(slot, &c.slots[slot]) {
			p.Changed++
		}
	}
	return p
}

func (s *mslot[K]) pending() bool { return s.phase == phasePlaced || s.phase == phaseClaimed }

func (c *ledgerCore[K]) reconcile(now uint64, limit int) Page {
	p := c.scan(scanReconcile, limit, func(_ int32, s *mslot[K]) bool {
		if !s.pending() || s.deadline > now {
			return false
		}
		s.finalize(OutcomeTimedOut, 0, now)
		return true
	})
	c.count(evReconciledTimeout, uint64(p.Changed))
	return p
}

func (c *ledgerCore[K]) reclaim(now uint64, limit int) Page {
	p := c.scan(scanReclaim, limit, func(slot int32, s *mslot[K]) bool {
		if s.phase != phaseFinal || s.finalizedAt == TimeUnset || now < satAdd(s.finalizedAt, c.retention) {
			return false
		}
		c.freeSlot(slot)
		return true
	})
	c.count(evReclaimed, uint64(p.Changed))
	return p
}

func (c *ledgerCore[K]) finalizeOwn(runner uint64, outcome Outcome, now uint64, limit int) Page {
	if runner == 0 {
		return Page{}
	}
	p := c.scan(scanRunner, limit, func(_ int32, s *mslot[K]) bool {
		if !s.pending() || s.runner != runner {
			return false
		}
		s.finalize(outcome, 0, now)
		return true
	})
	c.count(evFinalizeWon, uint64(p.Changed))
	return p
}

func (c *ledgerCore[K]) sweepOrphans(now, quiet uint64, limit int) Page {
	p := c.scan(scanOrphan, limit, func(_ int32, s *mslot[K]) bool {
		if !s.pending() || s.runner == 0 || satAdd(s.refreshedAt, quiet) > now {
			return false
		}
		s.finalize(OutcomeOrphaned, 0, now)
		return true
	})
	c.count(evFinalizeWon, uint64(p.Changed))
	return p
}

func (c *ledgerCore[K]) get(key K) (Record, bool) {
	slot, ok := c.index[key]
	if !ok {
		return Record{}, false
	}
	s := &c.slots[slot]
	r := Record{State: s.state(), ID: s.id, Runner: s.runner, Deadline: s.deadline, RefreshedAt: s.refreshedAt,
		FinalizedAt: s.finalizedAt, Payload: s.payload, Duplicates: s.duplicates,
		LastDuplicatePayload: s.dupPayload}
	if s.phase == phaseFinal {
		r.Outcome = s.outcome
	}
	return r, true
}

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return TimeUnset
}

// lock takes the mutex of an open ledger; false (and no lock held) when it
// is nil or closed.
func (c *ledgerCore[K]) lock() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	return true
}

func (c *ledgerCore[K]) close() error {
	if !c.lock() {
		return ErrHandleClosed
	}
	c.closed = true
	c.slots, c.index, c.free = nil, nil, nil
	c.mu.Unlock()
	return nil
}

func checkLimit(limit int) error {
	if limit < 0 {
		return ErrInvalidArgument
	}
	return nil
}

// mutexLedger is the mutex implementation of Ledger, with its method set.
type mutexLedger struct {
	c ledgerCore[string]
}

func newMutexLedger(cfg LedgerConfig, registry *goRegistry) (*mutexLedger, error) {
	var label ledgerLabel
	switch cfg.Kind {
	case KindClaim:
		label = labelClaim
	case KindPending:
		label = labelPending
	default:
		return nil, errInvalidCapacity
	}
	if !validCapacity(cfg.Capacity, LedgerCapacityMax) {
		return nil, errInvalidCapacity
	}
	l := &mutexLedger{}
	l.c.init(label, cfg.Capacity, cfg.Retention, registry, strings.Clone)
	return l, nil
}

// borrow views key as a string for look-ups; the ledger copies it (own)
// before it keeps it.
func borrow(key []byte) string { return unsafe.String(unsafe.SliceData(key), len(key)) }

func (l *mutexLedger) Insert(key []byte, id, runner, deadline, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Decision{}, errInvalidKey
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.insert(borrow(key), id, runner, deadline, now), nil
}

// checkBatch checks a batch's count and keys, as the C ABI does first.
func checkBatch(keys [][]byte) error {
	if len(keys) == 0 || len(keys) > BatchMax {
		return ErrInvalidArgument
	}
	for _, k := range keys {
		if !validKey(k) {
			return errInvalidKey
		}
	}
	return nil
}

func (l *mutexLedger) Place(keys [][]byte, placeholder, deadline, now uint64, out []Decision) (int, error) {
	if !l.c.lock() {
		return 0, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, ErrInvalidArgument
	}
	var buf [64]string
	ks := buf[:0]
	if len(keys) > len(buf) {
		ks = make([]string, 0, len(keys))
	}
	for _, k := range keys {
		ks = append(ks, borrow(k))
	}
	return l.c.place(ks, placeholder, deadline, now, out), nil
}

func (l *mutexLedger) Claim(key []byte, placeholder, requestID, runner, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Decision{}, errInvalidKey
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.claim(borrow(key), placeholder, requestID, runner, now), nil
}

func (l *mutexLedger) Finalize(key []byte, outcome Outcome, payload, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Decision{}, errInvalidKey
	}
	if err := checkOutcome(outcome); err != nil {
		return Decision{}, err
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.finalize(borrow(key), outcome, payload, now), nil
}

func (l *mutexLedger) FinalizeBatch(keys [][]byte, payloads []uint64, outcome Outcome, now uint64, out []Decision) (int, error) {
	if !l.c.lock() {
		return 0, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if err := checkBatch(keys); err != nil {
		return 0, err
	}
	if payloads != nil && len(payloads) != len(keys) {
		return 0, ErrInvalidArgument
	}
	if err := checkOutcome(outcome); err != nil {
		return 0, err
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, ErrInvalidArgument
	}
	won, dup := 0, 0
	for i, k := range keys {
		var payload uint64
		if payloads != nil {
			payload = payloads[i]
		}
		out[i] = l.c.finalizeInner(borrow(k), outcome, payload, now)
		switch out[i].Result {
		case ResultWon:
			won++
		case ResultDuplicate:
			dup++
		}
	}
	l.c.count(evFinalizeWon, uint64(won))
	l.c.count(evFinalizeDuplicate, uint64(dup))
	return won, nil
}

func (l *mutexLedger) Take(key []byte, expectedID uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Decision{}, errInvalidKey
	}
	return l.c.take(borrow(key), expectedID), nil
}

func (l *mutexLedger) Touch(key []byte, runner, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Decision{}, errInvalidKey
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.touch(borrow(key), runner, now), nil
}

// pageCall runs a scan after the checks every scan makes (the C ABI's order:
// the limit is Go's own, then the time).
func (c *ledgerCore[K]) pageCall(now uint64, limit int, run func() Page) (Page, error) {
	if !c.lock() {
		return Page{}, ErrHandleClosed
	}
	defer c.mu.Unlock()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	if err := checkTime(now); err != nil {
		return Page{}, err
	}
	return run(), nil
}

func (l *mutexLedger) Reconcile(now uint64, limit int) (Page, error) {
	return l.c.pageCall(now, limit, func() Page { return l.c.reconcile(now, limit) })
}

func (l *mutexLedger) Reclaim(now uint64, limit int) (Page, error) {
	return l.c.pageCall(now, limit, func() Page { return l.c.reclaim(now, limit) })
}

func (l *mutexLedger) FinalizeOwn(runner uint64, outcome Outcome, now uint64, limit int) (Page, error) {
	if !l.c.lock() {
		return Page{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	if err := checkOutcome(outcome); err != nil {
		return Page{}, err
	}
	if err := checkTime(now); err != nil {
		return Page{}, err
	}
	return l.c.finalizeOwn(runner, outcome, now, limit), nil
}

func (l *mutexLedger) SweepOrphans(now, quiet uint64, limit int) (Page, error) {
	return l.c.pageCall(now, limit, func() Page { return l.c.sweepOrphans(now, quiet, limit) })
}

func (l *mutexLedger) Get(key []byte) (Record, bool, error) {
	if !l.c.lock() {
		return Record{}, false, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validKey(key) {
		return Record{}, false, errInvalidKey
	}
	r, ok := l.c.get(borrow(key))
	return r, ok, nil
}

func (c *ledgerCore[K]) len() (int, error) {
	if !c.lock() {
		return 0, ErrHandleClosed
	}
	defer c.mu.Unlock()
	return len(c.index), nil
}

func (c *ledgerCore[K]) countsNow() (Counts, error) {
	if !c.lock() {
		return Counts{}, ErrHandleClosed
	}
	defer c.mu.Unlock()
	return c.counts.counts(), nil
}

func (l *mutexLedger) Len() (int, error)       { return l.c.len() }
func (l *mutexLedger) Counts() (Counts, error) { return l.c.countsNow() }
func (l *mutexLedger) Close() error            { return l.c.close() }

// mutexHandoffLedger is the mutex implementation of HandoffLedger.
type mutexHandoffLedger struct {
	c ledgerCore[HandoffKey]
}

func newMutexHandoffLedger(cfg HandoffConfig, registry *goRegistry) (*mutexHandoffLedger, error) {
	if !validCapacity(cfg.Capacity, LedgerCapacityMax) {
		return nil, errInvalidCapacity
	}
	l := &mutexHandoffLedger{}
	l.c.init(labelHandoff, cfg.Capacity, cfg.Retention, registry, func(k HandoffKey) HandoffKey { return k })
	return l, nil
}

func (l *mutexHandoffLedger) Claim(key HandoffKey, deadline, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validHandoffKey(&key) {
		return Decision{}, errInvalidKey
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.insert(key, 0, 0, deadline, now), nil
}

func (l *mutexHandoffLedger) ClaimBatch(keys []HandoffKey, deadline, now uint64, out []Decision) (int, error) {
	if !l.c.lock() {
		return 0, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if len(keys) == 0 || len(keys) > BatchMax {
		return 0, ErrInvalidArgument
	}
	for i := range keys {
		if !validHandoffKey(&keys[i]) {
			return 0, errInvalidKey
		}
	}
	if err := checkTime(now); err != nil {
		return 0, err
	}
	if len(out) != len(keys) {
		return 0, ErrInvalidArgument
	}
	won := 0
	for i := range keys {
		out[i] = l.c.insert(keys[i], 0, 0, deadline, now)
		if out[i].Result == ResultWon {
			won++
		}
	}
	return won, nil
}

func (l *mutexHandoffLedger) Complete(key HandoffKey, outcome Outcome, now uint64) (Decision, error) {
	if !l.c.lock() {
		return Decision{}, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validHandoffKey(&key) {
		return Decision{}, errInvalidKey
	}
	if err := checkOutcome(outcome); err != nil {
		return Decision{}, err
	}
	if err := checkTime(now); err != nil {
		return Decision{}, err
	}
	return l.c.finalize(key, outcome, 0, now), nil
}

func (l *mutexHandoffLedger) Reconcile(now uint64, limit int) (Page, error) {
	return l.c.pageCall(now, limit, func() Page { return l.c.reconcile(now, limit) })
}

func (l *mutexHandoffLedger) Reclaim(now uint64, limit int) (Page, error) {
	return l.c.pageCall(now, limit, func() Page { return l.c.reclaim(now, limit) })
}

func (l *mutexHandoffLedger) Get(key HandoffKey) (Record, bool, error) {
	if !l.c.lock() {
		return Record{}, false, ErrHandleClosed
	}
	defer l.c.mu.Unlock()
	if !validHandoffKey(&key) {
		return Record{}, false, errInvalidKey
	}
	r, ok := l.c.get(key)
	return r, ok, nil
}

func (l *mutexHandoffLedger) Len() (int, error)       { return l.c.len() }
func (l *mutexHandoffLedger) Counts() (Counts, error) { return l.c.countsNow() }
func (l *mutexHandoffLedger) Close() error            { return l.c.close() }

// mutexAnchorTable is the mutex implementation of AnchorTable: anchors by id
// in a map, TimeUnset while unset.
type mutexAnchorTable struct {
	mu       sync.Mutex
	closed   bool
	capacity int
	anchors  map[uint64]uint64
}

func newMutexAnchorTable(capacity int) (*mutexAnchorTable, error) {
	if !validCapacity(capacity, AnchorTableCapacityMax) {
		return nil, errInvalidCapacity
	}
	return &mutexAnchorTable{capacity: capacity, anchors: make(map[uint64]uint64, min(capacity, 1<<12))}, nil
}

func (t *mutexAnchorTable) lock() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	return true
}

func (t *mutexAnchorTable) Insert(id, value uint64) error {
	if !t.lock() {
		return ErrHandleClosed
	}
	defer t.mu.Unlock()
	// A known id first: an insert of an existing id takes no place (so it
	// never makes the table look full to an insert of a new one).
	if _, ok := t.anchors[id]; ok {
		return ErrAlreadyExists
	}
	if len(t.anchors) >= t.capacity {
		return ErrFull
	}
	t.anchors[id] = value
	return nil
}

func (t *mutexAnchorTable) Remove(id uint64) error {
	if !t.lock() {
		return ErrHandleClosed
	}
	defer t.mu.Unlock()
	if _, ok := t.anchors[id]; !ok {
		return ErrNotFound
	}
	delete(t.anchors, id)
	return nil
}

func (t *mutexAnchorTable) TryFire(id, now, period uint64) (Fire, error) {
	if !t.lock() {
		return Fire{}, ErrHandleClosed
	}
	defer t.mu.Unlock()
	if err := checkTime(now); err != nil {
		return Fire{}, err
	}
	current, ok := t.anchors[id]
	if !ok {
		return Fire{}, ErrNotFound
	}
	if current == TimeUnset {
		t.anchors[id] = now
		return Fire{Kind: FireAnchoredFirstSeen}, nil
	}
	// A firing must move the anchor: due at anchor + max(period, 1), so with
	// period 0 it fires at most once per distinct now.
	if due := satAdd(current, max(period, 1)); now < due {
		return Fire{Kind: FireNotDue, Value: due}, nil
	}
	t.anchors[id] = now
	return Fire{Kind: FireFired, Value: current}, nil
}

func (t *mutexAnchorTable) Advance(id, expected, next uint64) (bool, error) {
	if !t.lock() {
		return false, ErrHandleClosed
	}
	defer t.mu.Unlock()
	if err := checkTime(next); err != nil {
		return false, err
	}
	current, ok := t.anchors[id]
	if !ok {
		return false, ErrNotFound
	}
	// An unset anchor matches no value, and an advance to the same value
	// changes nothing, so nobody wins it.
	if expected == TimeUnset || next == expected || current != expected {
		return false, nil
	}
	t.anchors[id] = next
	return true, nil
}

func (t *mutexAnchorTable) AnchorUnset(id, now uint64) (bool, error) {
	if !t.lock() {
		return false, ErrHandleClosed
	}
	defer t.mu.Unlock()
	if err := checkTime(now); err != nil {
		return false, err
	}
	current, ok := t.anchors[id]
	if !ok {
		return false, ErrNotFound
	}
	if current != TimeUnset {
		return false, nil
	}
	t.anchors[id] = now
	return true, nil
}

func (t *mutexAnchorTable) Get(id uint64) (uint64, error) {
	if !t.lock() {
		return 0, ErrHandleClosed
	}
	defer t.mu.Unlock()
	v, ok := t.anchors[id]
	if !ok {
		return 0, ErrNotFound
	}
	return v, nil
}

func (t *mutexAnchorTable) Len() (int, error) {
	if !t.lock() {
		return 0, ErrHandleClosed
	}
	defer t.mu.Unlock()
	return len(t.anchors), nil
}

func (t *mutexAnchorTable) Close() error {
	if !t.lock() {
		return ErrHandleClosed
	}
	t.closed = true
	t.anchors = nil
	t.mu.Unlock()
	return nil
}
