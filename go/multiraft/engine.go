package multiraft

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/atomicx"
)

// engine is one slot's admission and FIFO of the host's values, run inline on
// the slot's words (slotWords) with sync/atomic, in both builds: the
// library's own transitions (docs/ABI.md, "Hosted slots"), in the same
// orders, so the library's snapshot, counters and metrics read what this
// code writes. Only where the words live differs between the builds.
//
// # Admission
//
// The fast path is one proposal on a leader slot, open, with room by the
// producers' view of what the consumer released: one load of the state word,
// one of the view, one CAS that decides and accounts, then the value is stored
// at the position the CAS handed out (the old admitted counter) and published.
// Anything else (a flag, the view saying full, a lost CAS, another kind, a
// batch) takes decide, the general decision, which refreshes the view, counts
// refusals and issues config-change tickets as the library does.
//
// # Value storage
//
// Values live in a ring of cells indexed by position, whose capacity grows
// with the depth the queue reaches, never with its history: generation k
// holds 1<<(k-1) cells and its field k sits in the state word's host bits, so
// the admission CAS checks room in the ring with the limits, atomically. When
// the ring, not a limit, is what refuses, the producer grows it (grow): a new
// generation of twice the capacity is installed, then one CAS moves the field
// to it; positions admitted from then on live there. The consumer reads a
// generation until the next one's start position and then drops it, so a
// queue's memory follows the deepest it has been (a high-water mark, as
// upstream's slice keeps its backing array), not how many items passed.
//
// A producer writes its run's values with plain stores, then publishes the
// run with one atomic store of its tag in the run's first cell (and a zero
// tag in each other cell of the run); the consumer, at that position, reads
// the tag, then the values, and writes no tag: every lap gives every cell a
// fresh tag, so a tag the consumer reads is at most one lap old, and a tag
// of the previous lap names another position (capacity apart). A cell is
// written again only after the consumer released its previous position: the
// CAS admits position p only while p - released < capacity, by a view the
// producer loaded after the consumer's store of released. Those atomic edges
// order every plain access for Go's memory model and the race detector.
//
// # Memory safety of the words
//
// In the cgo build the words are the library's memory, freed by the holder's
// finalizer: every method ends with runtime.KeepAlive(e) so the words
// outlive every access.
type engine[T any] struct {
	w       slotWords
	limit   uint64
	limitBg uint64
	id      uint64
	obs     ProposalAdmissionObserver
	fail    atomic.Pointer[error]
	holder  any // keeps the words' memory (cgo: the C handle) alive
	// extraBytes is the memory the words take besides the engine: the
	// library's slot (cgo) or the Go words (pure Go).
	extraBytes int
	// unregister folds the queue's counts into its registry at Close (pure
	// Go); nil in the cgo build, whose registry reads the words itself.
	unregister func()
	// gens[k] is generation k (nil before it is installed and after the
	// consumer left it); topGen the newest installed.
	gens   [ringBits + 1]atomic.Pointer[ringGen[T]]
	topGen atomic.Uint64
	growMu sync.Mutex // cold: serializes installing generations

	// raceSeen (under -race only) repeats, in Go memory, the edge from the
	// consumer's reads of cells to the producers' next writes of them that
	// the words' released counters give: stored by the consumer before
	// released, loaded by a producer after its view and before it writes.
	raceSeen atomic.Uint64

	// The consumer side, owned by whoever holds gate.
	gate atomic.Bool
	cur  cursor
}

// cursor is the consumer's position: cumulative released counts, the
// generation it reads and the run it is in.
type cursor struct {
	pos, bg, other uint64
	k              uint64
	runLeft        uint64
	runTag         uint64
}

// ringGen is one generation of the value storage: 1<<(k-1) cells, and the
// position (mod 2^27) its first item has, stored with startSet once known.
type ringGen[T any] struct {
	cells []cell[T]
	mask  uint64
	start atomic.Uint64
}

const startSet = uint64(1) << 63

// cell holds one value; tag is the head tag of the run that starts here
// (ready bit, background bit, kind, length and position), or 0 in a run's
// other cells.
type cell[T any] struct {
	tag    atomic.Uint64
	ticket uint64
	value  T
}

const (
	tagReady   = uint64(1) << 63
	tagBg      = uint64(1) << 62
	tagKindPos = 59
)

func runTag(pos, n uint64, kind ControlKind, bg bool) uint64 {
	t := tagReady | uint64(kind)<<tagKindPos | n<<countBits | pos&countMask
	if bg {
		t |= tagBg
	}
	return t
}

// fastTries is how many CASes the fast path makes before it hands a
// contended admission to decide.
const fastTries = 4

// initialRing is the field of a new queue's first generation: 4 cells.
const initialRing = 3

// maxRing is the field whose capacity holds the largest limit.
const maxRing = 26

func newEngine[T any](w slotWords, limits Limits, id uint64, obs ProposalAdmissionObserver, holder any) *engine[T] {
	e := &engine[T]{w: w, limit: uint64(limits.MaxQueuedControls), limitBg: uint64(limits.MaxQueuedBackgroundControls),
		id: id, obs: obs, holder: holder}
	k := uint64(initialRing)
	g := newGen[T](k)
	g.start.Store(startSet)
	e.gens[k].Store(g)
	e.topGen.Store(k)
	e.cur.k = k
	// Before the queue is shared: no admission can race this store.
	w.state.Store(w.state.Load()&^(ringBits<<ringShift) | k<<ringShift)
	return e
}

func newGen[T any](k uint64) *ringGen[T] {
	n := uint64(1) << (k - 1)
	return &ringGen[T]{cells: make([]cell[T], n), mask: n - 1}
}

// admitOutcome is what an admission returns: nil, or the refusal.
type grant struct {
	pos     uint64 // position of the first granted item
	k       uint64 // the generation its values go to
	granted uint64
	refused error
	ticket  uint64
}

// admitOne admits one value (Admit, AdmitConfigChange).
func (e *engine[T]) admitOne(kind ControlKind, class ProposalClass, v *T) (uint64, error) {
	bg := class.background()
	if kind == ControlPropose {
		// A lost CAS means another producer admitted: retry here while the
		// word still allows the fast path; anything else goes to decide.
		for try := 0; try < fastTries; try++ {
			w := e.w.state.Load()
			if w&refuseFast != leaderBit {
				if w&refuseFast == 0 {
					// An open follower: upstream's check 3, decided on this word
					// (what decide would do), without the general path.
					e.countRefused(class, AdmissionNotLeader, 1)
					if e.obs != nil {
						e.obs.ObserveSlotProposalAdmission(SlotID(e.id), class.Normalize(), string(AdmissionNotLeader))
					}
					return 0, errNotLeader
				}
				break
			}
			q := queuedOf(w, e.w.releasedView.Load())
			k := ringField(w)
			if q >= e.limit || q >= uint64(1)<<(k-1) ||
				bg && queuedOf(w>>bgShift, e.w.releasedBgView.Load()) >= e.limitBg {
				break
			}
			if e.w.state.CompareAndSwap(w, admitWord(w, 1, bg, false)) {
				e.putOne(k, w&countMask, kind, bg, 0, v)
				runtime.KeepAlive(e)
				if e.obs != nil {
					e.obs.ObserveSlotProposalAdmission(SlotID(e.id), class.Normalize(), string(AdmissionOK))
				}
				return 0, nil
			}
		}
	}
	g := e.reserve(kind, bg, 1)
	if g.granted == 1 {
		e.putOne(g.k, g.pos, kind, bg, g.ticket, v)
	}
	runtime.KeepAlive(e)
	e.report(kind, class, g, 1)
	return g.ticket, g.refused
}

// admitRun admits the longest prefix of vs that fits, in runs of at most
// MaxLimit values.
func (e *engine[T]) admitRun(kind ControlKind, class ProposalClass, vs []T) (int, error) {
	bg := class.background()
	admitted := 0
	var err error
	for len(vs) > 0 && err == nil {
		chunk := vs[:min(len(vs), MaxLimit)]
		g := e.reserve(kind, bg, uint64(len(chunk)))
		if g.granted > 0 {
			e.put(g.k, g.pos, kind, bg, g.ticket, chunk[:g.granted])
		}
		admitted += int(g.granted)
		err = g.refused
		if err != nil && kind == ControlPropose {
			if r := refusalResult(err); r != "" {
				e.countRefused(class, r, uint64(len(vs))-g.granted)
			}
		}
		vs = vs[len(chunk):]
	}
	runtime.KeepAlive(e)
	if kind == ControlPropose && e.obs != nil {
		class = class.Normalize()
		for i := 0; i < admitted; i++ {
			e.obs.ObserveSlotProposalAdmission(SlotID(e.id), class, string(AdmissionOK))
		}
		if r := refusalResult(err); r != "" {
			e.obs.ObserveSlotProposalAdmission(SlotID(e.id), class, string(r))
		}
	}
	return admitted, err
}

// report counts and observes a single proposal's decision off the fast path.
func (e *engine[T]) report(kind ControlKind, class ProposalClass, g grant, want uint64) {
	if kind != ControlPropose {
		return
	}
	result := AdmissionOK
	if g.refused != nil {
		if result = refusalResult(g.refused); result == "" {
			return
		}
		e.countRefused(class, result, want-g.granted)
	}
	if e.obs != nil {
		e.obs.ObserveSlotProposalAdmission(SlotID(e.id), class.Normalize(), string(result))
	}
}

func (e *engine[T]) countRefused(class ProposalClass, result AdmissionResult, n uint64) {
	c, i := outcomeIndex(class, result)
	e.w.outcomes[c][i].Add(n)
	runtime.KeepAlive(e)
}

// reserve is the general decision for n items of one kind: the library's,
// with the other kinds' counting and the config change's ticket around it.
func (e *engine[T]) reserve(kind ControlKind, bg bool, want uint64) grant {
	bg = bg && kind == ControlPropose
	if kind == ControlPropose {
		return e.decide(kind, bg, want)
	}
	e.w.admittedOther.Add(want)
	g := e.decide(kind, bg, want)
	if g.granted < want {
		e.w.admittedOther.Add(^(want - g.granted - 1))
	}
	if g.granted > 0 {
		if kind == ControlConfigChange {
			// After the CAS that set the pending bit; the new, odd value is
			// the ticket.
			g.ticket = e.w.configSerial.Add(1)
		}
		e.w.committedOther.Add(g.granted)
	}
	return g
}

// decide runs upstream's checks on the state word, then the limits and the
// ring's capacity by the view, and CASes the word forward: the library's
// decision, plus the ring (a ring too small grows; it never refuses).
func (e *engine[T]) decide(kind ControlKind, bg bool, want uint64) grant {
	capN := want
	if kind == ControlConfigChange {
		capN = 1
	}
	need := min(want, capN)
	w := e.w.state.Load()
	rel, relBg := e.loadView(bg)
	refreshed := false
	for {
		if err := e.gateCheck(w, kind); err != nil {
			return grant{refused: err}
		}
		qt := queuedOf(w, rel)
		qb := queuedOf(w>>bgShift, relBg)
		if qt > e.limit || (bg && qb > e.limitBg) {
			// The word went stale after it was loaded: reload both, in order.
			w = e.w.state.Load()
			rel, relBg = e.loadView(bg)
			continue
		}
		room := e.limit - qt
		roomBg := ^uint64(0)
		if bg {
			roomBg = e.limitBg - qb
		}
		k := ringField(w)
		ringRoom := uint64(0)
		if c := uint64(1) << (k - 1); qt < c {
			ringRoom = c - qt
		}
		byLimits := min(need, room, roomBg)
		granted := min(byLimits, ringRoom)
		if granted < need && !refreshed {
			rel, relBg = e.refreshView(bg)
			refreshed = true
			continue
		}
		if granted < byLimits {
			e.grow(k)
			w = e.w.state.Load()
			rel, relBg = e.loadView(bg)
			refreshed = false
			continue
		}
		var refused error
		switch {
		case granted == want:
		case granted == capN:
			refused = errConfigChangePending
		case granted == room:
			refused = errSlotBusy
			if kind == ControlPropose {
				refused = errProposalBusy
			}
		default:
			refused = errProposalThrottled
		}
		if granted == 0 {
			return grant{refused: refused}
		}
		next := admitWord(w, granted, bg, kind == ControlConfigChange)
		if e.w.state.CompareAndSwap(w, next) {
			return grant{pos: w & countMask, k: k, granted: granted, refused: refused}
		}
		w = e.w.state.Load()
		rel, relBg = e.loadView(bg)
		refreshed = false
	}
}

// gateCheck is upstream's checks 1 to 4 on a state word, with the handle's.
func (e *engine[T]) gateCheck(w uint64, kind ControlKind) error {
	switch {
	case w&handleClosed != 0:
		return errQueueClosed
	case w&closedBit != 0:
		return errSlotClosed
	case w&fatalBit != 0:
		if p := e.fail.Load(); p != nil {
			return *p
		}
		return errSlotFailed
	case (kind == ControlPropose || kind == ControlConfigChange) && w&leaderBit == 0:
		return errNotLeader
	case kind == ControlConfigChange && w&ccPending != 0:
		return errConfigChangePending
	}
	return nil
}

func (e *engine[T]) loadView(bg bool) (uint64, uint64) {
	rel := e.w.releasedView.Load()
	if !bg {
		return rel, 0
	}
	return rel, e.w.releasedBgView.Load()
}

// refreshView raises the view to what the consumer has released.
func (e *engine[T]) refreshView(bg bool) (uint64, uint64) {
	rel := maxWord(e.w.releasedView, e.w.released.Load())
	if !bg {
		return rel, 0
	}
	return rel, maxWord(e.w.releasedBgView, e.w.releasedBg.Load())
}

// grow installs generation k+1 (twice the capacity) and moves the state
// word's field to it, unless another producer already did. It runs under
// growMu, a cold path: only a producer whose admission the ring (not a limit)
// refused gets here, a few times in a queue's life.
func (e *engine[T]) grow(k uint64) {
	e.growMu.Lock()
	defer e.growMu.Unlock()
	if ringField(e.w.state.Load()) != k || k >= maxRing {
		return
	}
	g := newGen[T](k + 1)
	e.gens[k+1].Store(g)
	for {
		w := e.w.state.Load()
		next := w&^(ringBits<<ringShift) | (k+1)<<ringShift
		if e.w.state.CompareAndSwap(w, next) {
			// Every position from w's admitted counter on lives in g.
			g.start.Store(startSet | w&countMask)
			e.topGen.Store(k + 1)
			return
		}
	}
}

func (e *engine[T]) putOne(k, pos uint64, kind ControlKind, bg bool, ticket uint64, v *T) {
	if raceEnabled {
		e.raceSeen.Load()
	}
	g := e.gens[k].Load()
	c := &g.cells[pos&g.mask]
	c.value = *v
	c.ticket = ticket
	publish(&c.tag, runTag(pos, 1, kind, bg))
}

func (e *engine[T]) put(k, pos uint64, kind ControlKind, bg bool, ticket uint64, vs []T) {
	if raceEnabled {
		e.raceSeen.Load()
	}
	g := e.gens[k].Load()
	for i := range vs {
		c := &g.cells[(pos+uint64(i))&g.mask]
		c.value = vs[i]
		if i > 0 {
			// An interior cell's tag is this lap's too: it can never be
			// read as the head of a later run (the type's docs).
			c.tag.Store(0)
		}
	}
	head := &g.cells[pos&g.mask]
	head.ticket = ticket
	publish(&head.tag, runTag(pos, uint64(len(vs)), kind, bg))
}

// take moves up to len(out) published items, in order, into out and
// releases them (consumer side, under the gate): the released counters are
// stored other kinds and background first, the total last, as the library's
// consumer does.
func (e *engine[T]) take(out []Control[T], r configResolver) int {
	c := &e.cur
	var zero T
	n := 0
	for n < len(out) {
		g := e.gens[c.k].Load()
		p := c.pos & countMask
		if c.runLeft == 0 {
			head := &g.cells[p&g.mask]
			tag := head.tag.Load()
			if tag&tagReady == 0 || tag&countMask != p {
				if !e.nextGen(p) {
					break
				}
				continue
			}
			c.runTag = tag
			c.runLeft = tag >> countBits & countMask
		}
		kind := ControlKind(c.runTag >> tagKindPos & 7)
		bg := c.runTag&tagBg != 0
		class := ProposalClassForeground
		if bg {
			class = ProposalClassBackground
		}
		m := min(c.runLeft, uint64(len(out)-n))
		for i := uint64(0); i < m; i++ {
			cl := &g.cells[(p+i)&g.mask]
			o := &out[n+int(i)]
			o.Kind, o.Class, o.Value = kind, class, cl.value
			cl.value = zero
			if cl.ticket != 0 {
				o.ConfigChange = ConfigChange{r: r, ticket: cl.ticket}
				cl.ticket = 0
			} else if o.ConfigChange.r != nil {
				o.ConfigChange = ConfigChange{}
			}
		}
		c.pos += m
		c.runLeft -= m
		if kind != ControlPropose {
			c.other += m
		} else if bg {
			c.bg += m
		}
		n += int(m)
	}
	if n > 0 {
		if raceEnabled {
			e.raceSeen.Store(c.pos)
		}
		publish(e.w.releasedOther, c.other)
		publish(e.w.releasedBg, c.bg)
		publish(e.w.released, c.pos)
	}
	runtime.KeepAlive(e)
	return n
}

// visit hands the published items from the consumer's cursor on, in order,
// to f without taking them (consumer side, under the gate), until f returns
// false; it returns how many it handed. Items a producer has admitted but
// not yet published, and those after them, are not visited.
func (e *engine[T]) visit(f func(Control[T]) bool, r configResolver) int {
	c := e.cur
	n := 0
	for {
		g := e.gens[c.k].Load()
		p := c.pos & countMask
		if c.runLeft == 0 {
			tag := g.cells[p&g.mask].tag.Load()
			if tag&tagReady == 0 || tag&countMask != p {
				j, ok := e.genAt(p, c.k)
				if !ok {
					break
				}
				c.k = j
				continue
			}
			c.runTag = tag
			c.runLeft = tag >> countBits & countMask
		}
		cl := &g.cells[p&g.mask]
		ctl := Control[T]{Kind: ControlKind(c.runTag >> tagKindPos & 7), Class: ProposalClassForeground, Value: cl.value}
		if c.runTag&tagBg != 0 {
			ctl.Class = ProposalClassBackground
		}
		if cl.ticket != 0 {
			ctl.ConfigChange = ConfigChange{r: r, ticket: cl.ticket}
		}
		c.pos++
		c.runLeft--
		n++
		if !f(ctl) {
			break
		}
	}
	runtime.KeepAlive(e)
	return n
}

// genAt is the newest generation after k that starts at or before position
// p, if any.
func (e *engine[T]) genAt(p, k uint64) (uint64, bool) {
	for j := e.topGen.Load(); j > k; j-- {
		g := e.gens[j].Load()
		if g == nil {
			continue
		}
		if s := g.start.Load(); s&startSet != 0 && (p-s)&countMask < 1<<26 {
			return j, true
		}
	}
	return 0, false
}

// nextGen moves the consumer to the newest generation that starts at or
// before position p, dropping the ones before it (all their items were
// read); false when there is none: p is not published yet.
func (e *engine[T]) nextGen(p uint64) bool {
	j, ok := e.genAt(p, e.cur.k)
	if !ok {
		return false
	}
	for i := e.cur.k; i < j; i++ {
		e.gens[i].Store(nil)
	}
	e.cur.k = j
	return true
}

// lock takes the consumer gate; consumers are serialized, and the one per
// slot that hosts run never waits.
func (e *engine[T]) lock() {
	for !e.gate.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func (e *engine[T]) unlock() { e.gate.Store(false) }

// closed reports whether Close ran.
func (e *engine[T]) closed() bool {
	c := e.w.state.Load()&handleClosed != 0
	runtime.KeepAlive(e)
	return c
}

// setFlag sets or clears a flag of an open handle (SetLeader, Demote,
// CloseSlot).
func (e *engine[T]) setFlag(bit uint64, set bool) error {
	var old uint64
	if set {
		old = orWord(e.w.state, bit)
	} else {
		old = andNotWord(e.w.state, bit)
	}
	runtime.KeepAlive(e)
	if old&handleClosed != 0 {
		return ErrHandleClosed
	}
	return nil
}

// failWith records err first-wins, then the library's fatal record and bit.
func (e *engine[T]) failWith(err error) (bool, error) {
	if e.closed() {
		return false, ErrHandleClosed
	}
	if !e.fail.CompareAndSwap(nil, &err) {
		return false, nil
	}
	// The Go error first, so a refusal that sees the fatal bit finds it.
	e.w.fatalCode.CompareAndSwap(0, fatalFound|1)
	orWord(e.w.state, fatalBit)
	runtime.KeepAlive(e)
	return true, nil
}

func (e *engine[T]) resolveConfigChange(ticket uint64) error {
	defer runtime.KeepAlive(e)
	if e.closed() {
		return ErrHandleClosed
	}
	if ticket&1 == 0 || !e.w.configSerial.CompareAndSwap(ticket, ticket+1) {
		return errConfigChangeStale
	}
	andNotWord(e.w.state, ccPending)
	return nil
}

// snapshot is the library's slot snapshot, on the words.
func (e *engine[T]) snapshot() SlotState {
	s := e.w.snapshot()
	runtime.KeepAlive(e)
	if s.Failed {
		s.FailErr = errSlotFailed
		if p := e.fail.Load(); p != nil {
			s.FailErr = *p
		}
	}
	return s
}

// counters are the library's outcome counts, on the words.
func (e *engine[T]) counters() AdmissionCounters {
	c := e.w.counters()
	runtime.KeepAlive(e)
	return c
}

// memoryBytes is the engine and the value storage it holds now.
func (e *engine[T]) memoryBytes() int {
	var zero cell[T]
	n := int(unsafe.Sizeof(*e))
	for i := range e.gens {
		if g := e.gens[i].Load(); g != nil {
			n += int(unsafe.Sizeof(*g)) + len(g.cells)*int(unsafe.Sizeof(zero))
		}
	}
	return n
}

// discard drops an engine that was never shared (a lost race to create a
// zero-value queue's): its words leave the registry.
func (e *engine[T]) discard() {
	if e.unregister != nil {
		e.unregister()
	}
}

// closeHandle closes the slot and the handle: from here every call returns
// ErrHandleClosed. It returns false when another Close got there first.
func (e *engine[T]) closeHandle() bool {
	old := orWord(e.w.state, closedBit|handleClosed)
	runtime.KeepAlive(e)
	return old&handleClosed == 0
}

// takeRest takes every item admitted before the handle closed (consumer side,
// under the gate): it waits for producers that won their CAS and have not
// published yet, which are inside their admission call.
func (e *engine[T]) takeRest(rest []Control[T], r configResolver) []Control[T] {
	end := e.w.state.Load() & countMask
	var buf [drainChunk]Control[T]
	for e.cur.pos&countMask != end {
		n := e.take(buf[:], r)
		if n == 0 {
			runtime.Gosched()
			continue
		}
		rest = append(rest, buf[:n]...)
		clear(buf[:n])
	}
	for i := range e.gens {
		e.gens[i].Store(nil)
	}
	runtime.KeepAlive(e)
	return rest
}

// publish is a release store of v into a (atomicx.StoreRelease): what the library's
// ring and consumer do with Release stores. Every load of a published word is
// sync/atomic's, an acquire.
func publish(a *atomic.Uint64, v uint64) {
	atomicx.StoreRelease((*uint64)(unsafe.Pointer(a)), v)
}
