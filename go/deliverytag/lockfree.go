package deliverytag

// The pure-Go implementation: the Rust core's algorithm (core/src/tag) in Go,
// lock-free on every read. In the pure-Go build it is Cache and Leader; in the
// cgo build it is compiled too, as the benchmarks' "purego" column.
//
// # Shape
//
// Each channel has a cell holding one immutable snapshot, a *body that is
// both the channel's reference (key, versions, source, topology) and its
// body (the local partition in a cache, every partition in a leader). A
// cache store replaces the snapshot with one CompareAndSwap, and only when
// the incoming tag is not stale by upstream's rule against the snapshot it
// replaces; a loser re-reads and re-judges. So an older store never evicts a
// newer tag, whatever the order, and a reader sees a whole snapshot.
//
// Cells live in a sync.Map (channel key → cell), changed only when a channel
// is first stored and when the cleanup unlinks it; a Channel handle holds
// its cell and skips the map. A hit loads the snapshot, runs the fence and
// marks the body with the current cleanup tick (raised only when older, never
// lowered, so a write once per cleanup interval): no lock, no allocation, and no
// shared write per hit but its counter, which lives in a row chosen by the
// calling goroutine's stack (statRow), so goroutines rarely share one.
//
// # Reclamation
//
// cleanup visits a bounded page of cells from a roster (a mutex-guarded
// slot list with a cursor that survives between pages: one lock per page,
// never on a look-up). A cell whose body is idle past the TTL, or which
// never held one, is retired: one CompareAndSwap replaces its snapshot with
// the cache's retired marker, then the cell is unlinked from the map. A
// store that meets the marker unlinks the cell if it is still linked and
// retries through the map, which makes a new cell; a handle that meets it
// answers through the map. The CompareAndSwap is the only decision, so a
// store racing the cleanup lands either before it (and the cleanup's
// CompareAndSwap fails) or after it (in a new cell).
//
// Hits are not stamped with a clock: a cleanup ends the current tick at its
// now once the tick has lasted a 32nd of the TTL, and a hit marks its body
// with the current tick. A body last hit in tick t was hit no later than t's
// end, which bounds its last access from above; a body hit in the current
// tick is never reclaimed. So reclamation is never earlier than upstream's
// exact clock, and later by at most the hit's tick and one cleanup interval.
//
// # Orderings
//
// Go's atomics are sequentially consistent: the snapshot's Store or
// CompareAndSwap publishes everything written into the body before it, and
// the Load that reads the snapshot sees those writes (the Go memory model's
// synchronizes-before). Access marks and counters are atomics read by
// nothing that decides correctness but the cleanup's TTL test.

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// body is one immutable tag snapshot; only its access marks move.
type body struct {
	key              string
	channelKey       string
	tagVersion       uint64
	smv              uint64
	sourceChannelKey string
	sourceSMV        uint64
	topology         PartitionTopologyVersion
	partitions       []NodePartition
	uidCount         int
	createdAt        int64
	// lastAccess is the latest exact access (unix ns): the store or build
	// that made the body, look-ups by key.
	lastAccess atomic.Int64
	// touched is the cleanup tick of the latest hit (0: never hit).
	touched atomic.Uint64
}

func newBody(t *DeliveryTag, partitions []NodePartition, created, now int64) *body {
	b := &body{
		key:              t.Key,
		channelKey:       t.ChannelKey,
		tagVersion:       t.TagVersion,
		smv:              t.SubscriberMutationVersion,
		sourceChannelKey: t.SourceChannelKey,
		sourceSMV:        t.SourceSubscriberMutationVersion,
		topology:         t.Topology.Clone(),
		partitions:       partitions,
		createdAt:        created,
	}
	for _, p := range partitions {
		b.uidCount += len(p.UIDs)
	}
	b.lastAccess.Store(now)
	return b
}

// touch marks a hit in tick: it raises the mark, writing only when the mark
// is older than tick (never lowering it).
func (b *body) touch(tick uint64) {
	if b.touched.Load() < tick {
		raiseUint64Atomic(&b.touched, tick)
	}
}

// raiseUint64Atomic raises *w to v unless it is already at least v.
func raiseUint64Atomic(w *atomic.Uint64, v uint64) {
	for {
		seen := w.Load()
		if seen >= v || w.CompareAndSwap(seen, v) {
			return
		}
	}
}

// tag is a deep copy of b.
func (b *body) tag() DeliveryTag {
	return DeliveryTag{
		Key:                             b.key,
		ChannelKey:                      b.channelKey,
		TagVersion:                      b.tagVersion,
		SubscriberMutationVersion:       b.smv,
		SourceChannelKey:                b.sourceChannelKey,
		SourceSubscriberMutationVersion: b.sourceSMV,
		Topology:                        b.topology.Clone(),
		Partitions:                      clonePartitions(b.partitions),
		CreatedAt:                       timeOf(b.createdAt),
		LastAccess:                      timeOf(b.lastAccess.Load()),
	}
}

// ref is the reference b makes current.
func (b *body) ref() TagRef {
	return TagRef{
		ChannelKey:                      b.channelKey,
		TagKey:                          b.key,
		TagVersion:                      b.tagVersion,
		SubscriberMutationVersion:       b.smv,
		SourceChannelKey:                b.sourceChannelKey,
		SourceSubscriberMutationVersion: b.sourceSMV,
		Topology:                        b.topology.Clone(),
	}
}

// fence is steps 3 to 9 of upstream's look-up fence, in order, against the
// current body.
func fence(b *body, r *TagRef) LookupReason {
	if b.key != r.TagKey {
		return LookupTagKeyMismatch
	}
	if r.TagVersion < b.tagVersion {
		return LookupStaleRequest
	}
	if r.TagVersion > b.tagVersion {
		return LookupNewerRequest
	}
	if r.SubscriberMutationVersion != 0 {
		if r.SubscriberMutationVersion < b.smv {
			return LookupStaleRequest
		}
		if r.SubscriberMutationVersion > b.smv {
			return LookupNewerRequest
		}
	}
	if r.SourceChannelKey != "" && r.SourceChannelKey != b.sourceChannelKey {
		return LookupStaleRequest
	}
	if r.SourceSubscriberMutationVersion != 0 {
		if r.SourceSubscriberMutationVersion < b.sourceSMV {
			return LookupStaleRequest
		}
		if r.SourceSubscriberMutationVersion > b.sourceSMV {
			return LookupNewerRequest
		}
	}
	if !b.topology.Equal(r.Topology) {
		return LookupTopologyMismatch
	}
	return LookupHit
}

// staleStore is upstream's rule: an incoming tag is refused iff its
// subscriber version is lower, or it has the same source with a lower
// source version, or the same key with a lower tag version.
func staleStore(cur, in *body) bool {
	return in.smv < cur.smv ||
		(in.sourceChannelKey == cur.sourceChannelKey && in.sourceSMV < cur.sourceSMV) ||
		(in.key == cur.key && in.tagVersion < cur.tagVersion)
}

// sourceStale is upstream's IsSourceStale on one body.
func sourceStale(b *body, source SourceVersion) bool {
	return b.sourceChannelKey != "" && b.sourceChannelKey == source.ChannelKey &&
		b.sourceSMV < source.SubscriberMutationVersion
}

// expired reports whether a body idle since last is older than ttl at now
// (strictly, as upstream): now - last > ttl, without overflow.
func expired(now, last int64, ttl uint64) bool {
	if now <= last {
		return false
	}
	// now > last: the exact difference is in (0, 2^64-1], which the
	// wrapping subtraction gives.
	return uint64(now)-uint64(last) > ttl
}

const minInt64 = -1 << 63

// nowNanos is now() as unix nanoseconds.
func nowNanos(now func() time.Time) int64 { return unixNanos(now()) }

// roster holds the entries a cleanup pages through: slots reused after
// removal, visited from a cursor that survives between pages. One mutex,
// taken once per new entry, per removal and per page, never on a look-up.
type roster[T any] struct {
	mu     sync.Mutex
	slots  []rosterSlot[T]
	free   []int
	cursor int
}

type rosterSlot[T any] struct {
	entry T
	used  bool
}

type rostered[T any] struct {
	slot  int
	entry T
}

func (r *roster[T]) add(entry T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		slot := r.free[n-1]
		r.free = r.free[:n-1]
		r.slots[slot] = rosterSlot[T]{entry: entry, used: true}
		return slot
	}
	r.slots = append(r.slots, rosterSlot[T]{entry: entry, used: true})
	return len(r.slots) - 1
}

// page returns up to limit entries from the cursor on, and whether the page
// reached the end of the slots (a pass is complete).
func (r *roster[T]) page(limit int) ([]rostered[T], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total := len(r.slots)
	if total == 0 {
		return nil, true
	}
	var out []rostered[T]
	wrapped := false
	for examined := 0; len(out) < limit && examined < total; examined++ {
		if r.cursor >= total {
			r.cursor = 0
		}
		if s := r.slots[r.cursor]; s.used {
			out = append(out, rostered[T]{slot: r.cursor, entry: s.entry})
		}
		r.cursor++
		if r.cursor >= total {
			wrapped = true
		}
	}
	return out, wrapped
}

func (r *roster[T]) remove(slot int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slot < len(r.slots) && r.slots[slot].used {
		var zero rosterSlot[T]
		r.slots[slot] = zero
		r.free = append(r.free, slot)
	}
}

// ticksKept is how many ended ticks keep their start time; older ones are
// bounded by the oldest kept.
const ticksKept = 64

// ticksPerTTL: a tick lasts at least ttl / ticksPerTTL (rounded up), so the
// kept ends span more than (ticksKept - 1) / ticksPerTTL TTLs and an end
// that falls out of the log is older than a TTL. (Ending a tick at every
// cleanup instead would let the oldest kept end trail now by 64 cleanup
// intervals forever, so that a body hit once was never reclaimed when 64
// intervals are shorter than the TTL.)
const ticksPerTTL = 32

// ticks are the cleanup ticks (see the file's docs): the current tick is
// one atomic; the starts of the latest ticks are the cleanup's only.
type ticks struct {
	current atomic.Uint64
	mu      sync.Mutex
	starts  []tickStart // oldest first
}

type tickStart struct {
	tick  uint64
	start int64
}

func (t *ticks) init() { t.current.Store(1) }

// now is the current tick (never 0, which marks "never hit").
func (t *ticks) now() uint64 { return t.current.Load() }

// advance ends the current tick at now, unless it started less than
// ttl / ticksPerTTL (rounded up) before now; callers are serialized (the
// cleanup's mutex).
func (t *ticks) advance(now int64, ttl uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.starts); n > 0 {
		start := t.starts[n-1].start
		if now < start || uint64(now)-uint64(start) < (ttl+ticksPerTTL-1)/ticksPerTTL {
			return
		}
	}
	next := t.current.Load() + 1
	t.starts = append(t.starts, tickStart{next, now})
	if len(t.starts) > ticksKept {
		t.starts = append(t.starts[:0], t.starts[1:]...)
	}
	t.current.Store(next)
}

// hitBound is an upper bound of when a body last hit in tick was hit:
// ok false for the current tick (no bound yet), minInt64 for "never hit".
func (t *ticks) hitBound(tick uint64) (int64, bool) {
	if tick == 0 {
		return minInt64, true
	}
	if tick >= t.current.Load() {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.starts {
		if s.tick == tick+1 {
			return s.start, true
		}
	}
	if len(t.starts) == 0 {
		return 1<<63 - 1, true
	}
	return t.starts[0].start, true
}

// statRows is how many counter rows a cache or leader keeps (a power of 2).
const (
	statRowBits = 5
	statRows    = 1 << statRowBits
)

// The counter indexes of a row: the seven reasons, then stored and stale.
const (
	statStored  = 7
	statStale   = 8
	statPerRow  = 9
	statRowSize = 128
)

type statRow struct {
	c [statPerRow]atomic.Uint64
	_ [statRowSize - statPerRow*8]byte
}

// tagStats are one cache's or leader's counts. Look-ups and stores count in
// the row of the calling goroutine's stack (rowOfCaller), so two goroutines
// rarely write one cache line; a read sums the rows.
type tagStats struct {
	rows      [statRows]statRow
	tags      atomic.Int64
	uids      atomic.Int64
	reclaimed [2]atomic.Uint64
}

// rowOfCaller picks a counter row from the address of this frame: goroutine
// stacks are disjoint (8 KiB at least), so goroutines fall in different
// rows, and one goroutine stays in its row while its stack does not move.
// The address is only hashed, never turned back into a pointer.
func rowOfCaller() int {
	var anchor byte
	a := uint64(uintptr(unsafe.Pointer(&anchor))) >> 13
	return int((a * 0x9e3779b97f4a7c15) >> (64 - statRowBits))
}

func (s *tagStats) bump(i int) { s.rows[rowOfCaller()].c[i].Add(1) }

// reasonIndex is r's index in lookupReasons (its C code).
func reasonIndex(r LookupReason) int {
	switch r {
	case LookupHit:
		return 0
	case LookupMissingRef:
		return 1
	case LookupMissingTag:
		return 2
	case LookupTagKeyMismatch:
		return 3
	case LookupStaleRequest:
		return 4
	case LookupNewerRequest:
		return 5
	}
	return 6
}

func (s *tagStats) lookup(r LookupReason) { s.bump(reasonIndex(r)) }

func (s *tagStats) hold(tags, uids int64) {
	s.tags.Add(tags)
	s.uids.Add(uids)
}

func (s *tagStats) counts() Counts {
	var c Counts
	for i := range s.rows {
		r := &s.rows[i]
		for j := 0; j < 7; j++ {
			c.Lookups[j] += r.c[j].Load()
		}
		c.Stored += r.c[statStored].Load()
		c.Stale += r.c[statStale].Load()
	}
	c.Tags = uint64(s.tags.Load())
	c.UIDs = uint64(s.uids.Load())
	c.ReclaimedBodies = s.reclaimed[0].Load()
	c.ReclaimedRefs = s.reclaimed[1].Load()
	return c
}

// goCache is the follower's partition cache (the file's docs).
type goCache struct {
	localNodeID uint64
	ttl         uint64
	now         func() time.Time
	index       sync.Map // string → *cacheCell
	roster      roster[*cacheCell]
	ticks       ticks
	retired     *body
	cleaning    sync.Mutex
	stats       tagStats
}

// cacheCell is one channel's place in the cache.
type cacheCell struct {
	channelKey string
	current    atomic.Pointer[body]
}

func newGoCache(localNodeID uint64, ttl time.Duration, now func() time.Time) *goCache {
	if now == nil {
		now = time.Now
	}
	c := &goCache{localNodeID: localNodeID, ttl: ttlNanos(ttl), now: now, retired: &body{}}
	c.ticks.init()
	return c
}

// load is the channel's snapshot through the map (nil: none).
func (c *goCache) load(channelKey string) *body {
	v, ok := c.index.Load(channelKey)
	if !ok {
		return nil
	}
	return v.(*cacheCell).current.Load()
}

// lookup is the fence through the map: the current body (nil on a missing
// ref) and the reason, counted.
func (c *goCache) lookup(r *TagRef) (*body, LookupReason) {
	b, reason := c.find(r)
	c.stats.lookup(reason)
	return b, reason
}

// find is lookup without the count (the public layer counts once the
// request's keys are checked, as the C ABI checks before it looks).
func (c *goCache) find(r *TagRef) (*body, LookupReason) {
	return c.finish(c.load(r.ChannelKey), r)
}

// findCell is find on a held cell: a retired cell answers through the map.
func (c *goCache) findCell(cell *cacheCell, r *TagRef) (*body, LookupReason) {
	cur := cell.current.Load()
	if cur == c.retired {
		cur = c.load(cell.channelKey)
	}
	return c.finish(cur, r)
}

func (c *goCache) finish(cur *body, r *TagRef) (*body, LookupReason) {
	if cur == nil || cur == c.retired {
		return nil, LookupMissingRef
	}
	reason := fence(cur, r)
	if reason == LookupHit {
		cur.touch(c.ticks.now())
	}
	return cur, reason
}

// live is b unless it is the retired marker.
func (c *goCache) live(b *body) *body {
	if b == c.retired {
		return nil
	}
	return b
}

// current is the channel's body (nil: none).
func (c *goCache) current(channelKey string) *body { return c.live(c.load(channelKey)) }

// currentCell is the held cell's body, through the map once it is retired.
func (c *goCache) currentCell(cell *cacheCell) *body {
	cur := cell.current.Load()
	if cur == c.retired {
		return c.current(cell.channelKey)
	}
	return cur
}

// lookupTag is the body cached under tagKey for channelKey, its access time
// refreshed.
func (c *goCache) lookupTag(channelKey, tagKey string) *body {
	b := c.current(channelKey)
	if b == nil || b.key != tagKey {
		return nil
	}
	raiseInt64(&b.lastAccess, nowNanos(c.now))
	return b
}

// cell is the channel's linked cell, made, linked and put on the roster if
// it has none.
func (c *goCache) cell(channelKey string) *cacheCell {
	if v, ok := c.index.Load(channelKey); ok {
		return v.(*cacheCell)
	}
	mine := &cacheCell{channelKey: channelKey}
	v, loaded := c.index.LoadOrStore(channelKey, mine)
	if !loaded {
		c.roster.add(mine)
	}
	return v.(*cacheCell)
}

// store is upstream's StoreFollowerPartition (the file's docs): the stored
// body and true, or the current body and false when t is stale. held is the
// cell of a Channel handle (nil: through the map, by t.ChannelKey).
func (c *goCache) store(held *cacheCell, t *DeliveryTag) (*body, bool) {
	now := nowNanos(c.now)
	local := NodePartition{NodeID: c.localNodeID}
	for _, p := range t.Partitions {
		if p.NodeID == c.localNodeID {
			local = p.Clone()
			break
		}
	}
	created := unixNanos(t.CreatedAt)
	if created == 0 {
		created = now
	}
	in := *t
	if held != nil {
		in.ChannelKey = held.channelKey
	}
	b := newBody(&in, []NodePartition{local}, created, now)
	cell := held
	if cell == nil {
		cell = c.cell(in.ChannelKey)
	}
	for {
		cur := cell.current.Load()
		if cur == c.retired {
			// Reclaimed under us: help unlink it, then go through the map
			// to a new cell.
			c.index.CompareAndDelete(cell.channelKey, cell)
			cell = c.cell(in.ChannelKey)
			continue
		}
		if cur != nil && staleStore(cur, b) {
			c.stats.bump(statStale)
			return cur, false
		}
		if cell.current.CompareAndSwap(cur, b) {
			if cur == nil {
				c.stats.hold(1, int64(b.uidCount))
			} else {
				c.stats.hold(0, int64(b.uidCount-cur.uidCount))
			}
			c.stats.bump(statStored)
			return b, true
		}
	}
}

// cleanup reclaims up to limit channels' cold bodies and dangling
// references at now (the file's docs).
func (c *goCache) cleanup(now int64, limit int) CleanupPage {
	var page CleanupPage
	if c.ttl == 0 || limit <= 0 {
		return page
	}
	if limit > CleanupLimitMax {
		limit = CleanupLimitMax
	}
	c.cleaning.Lock()
	defer c.cleaning.Unlock()
	c.ticks.advance(now, c.ttl)
	cells, wrapped := c.roster.page(limit)
	page.Wrapped = wrapped
	for _, e := range cells {
		page.Visited++
		cell := e.entry
		cur := cell.current.Load()
		reclaimBody := false
		if cur != nil && cur != c.retired {
			hit, ok := c.ticks.hitBound(cur.touched.Load())
			if !ok {
				continue
			}
			last := cur.lastAccess.Load()
			if hit > last {
				last = hit
			}
			if !expired(now, last, c.ttl) {
				continue
			}
			reclaimBody = true
		}
		if cur != c.retired {
			if !cell.current.CompareAndSwap(cur, c.retired) {
				// A store got there first: the channel is live again.
				continue
			}
			if reclaimBody {
				page.Reclaimed++
				c.stats.hold(-1, -int64(cur.uidCount))
			}
		}
		c.index.CompareAndDelete(cell.channelKey, cell)
		c.roster.remove(e.slot)
		page.Unlinked++
	}
	c.stats.reclaimed[0].Add(uint64(page.Reclaimed))
	c.stats.reclaimed[1].Add(uint64(page.Unlinked))
	return page
}

// channels is how many channels have a cell (a moment's view).
func (c *goCache) channels() int {
	n := 0
	c.index.Range(func(_, _ any) bool { n++; return true })
	return n
}

// The dirty word of a leader channel: the pending mutations in the low 32
// bits, and a flag for a failed one.
const (
	dirtyFailed  = uint64(1) << 32
	dirtyPending = dirtyFailed - 1
)

// goLeader is the leader side: builds (key reuse and the bump rule, fresh
// keys, ephemeral tags), membership mutations with the dirty lifecycle, the
// fetch by key and TTL reclamation. Builds and mutations of one channel
// hold that channel's mutex (each is a read-modify-write of the channel's
// current tag, off the delivery hot path); reads take no lock.
type goLeader struct {
	localNodeID uint64
	ttl         uint64
	now         func() time.Time
	newTagKey   func() string
	channels    sync.Map // string → *leaderChannel
	byKey       sync.Map // string → *body
	roster      roster[string]
	ticks       ticks
	cleaning    sync.Mutex
	stats       tagStats
}

type leaderChannel struct {
	current atomic.Pointer[body]
	dirty   atomic.Uint64
	mu      sync.Mutex
}

func newGoLeader(localNodeID uint64, ttl time.Duration, now func() time.Time, newTagKey func() string) *goLeader {
	if now == nil {
		now = time.Now
	}
	if newTagKey == nil {
		newTagKey = randomTagKey
	}
	l := &goLeader{localNodeID: localNodeID, ttl: ttlNanos(ttl), now: now, newTagKey: newTagKey}
	l.ticks.init()
	return l
}

func (l *goLeader) channel(channelKey string) *leaderChannel {
	if v, ok := l.channels.Load(channelKey); ok {
		return v.(*leaderChannel)
	}
	v, _ := l.channels.LoadOrStore(channelKey, &leaderChannel{})
	return v.(*leaderChannel)
}

func (l *goLeader) loadChannel(channelKey string) *leaderChannel {
	if v, ok := l.channels.Load(channelKey); ok {
		return v.(*leaderChannel)
	}
	return nil
}

// publish makes b reachable by key, replacing an older body under its key.
func (l *goLeader) publish(b *body) {
	old, loaded := l.byKey.Swap(b.key, b)
	if !loaded {
		l.roster.add(b.key)
		l.stats.hold(1, int64(b.uidCount))
	} else {
		l.stats.hold(0, int64(b.uidCount-old.(*body).uidCount))
	}
	l.stats.bump(statStored)
}

// build is upstream's BuildLeaderTag: the channel's key and version reused,
// the version bumped iff the subscriber version, source or topology changed
// (partition contents are not compared); a fresh key and version 1 for a
// channel without a tag or with MintFreshKey. A failed mark is cleared when
// no mutation is pending.
func (l *goLeader) build(r *BuildRequest) *body {
	ch := l.channel(r.ChannelKey)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	now := nowNanos(l.now)
	var key string
	version := uint64(1)
	if cur := ch.current.Load(); cur != nil && !r.MintFreshKey {
		key, version = cur.key, cur.tagVersion
		if r.SubscriberMutationVersion != cur.smv || r.SourceChannelKey != cur.sourceChannelKey ||
			r.SourceSubscriberMutationVersion != cur.sourceSMV || !r.Topology.Equal(cur.topology) {
			version++
		}
	} else {
		key = l.newTagKey()
	}
	b := newBody(&DeliveryTag{Key: key, ChannelKey: r.ChannelKey, TagVersion: version,
		SubscriberMutationVersion: r.SubscriberMutationVersion, SourceChannelKey: r.SourceChannelKey,
		SourceSubscriberMutationVersion: r.SourceSubscriberMutationVersion, Topology: r.Topology},
		clonePartitions(r.Partitions), now, now)
	ch.current.Store(b)
	l.publish(b)
	if d := ch.dirty.Load(); d&dirtyPending == 0 && d != 0 {
		ch.dirty.Store(0)
	}
	return b
}

// buildEphemeral is upstream's BuildEphemeralTag: a body under a fresh key,
// version 1, reachable only by key.
func (l *goLeader) buildEphemeral(r *BuildRequest) *body {
	now := nowNanos(l.now)
	b := newBody(&DeliveryTag{Key: l.newTagKey(), ChannelKey: r.ChannelKey, TagVersion: 1,
		SubscriberMutationVersion: r.SubscriberMutationVersion, SourceChannelKey: r.SourceChannelKey,
		SourceSubscriberMutationVersion: r.SourceSubscriberMutationVersion, Topology: r.Topology},
		clonePartitions(r.Partitions), now, now)
	l.publish(b)
	return b
}

// current is the channel's current body (nil: none).
func (l *goLeader) current(channelKey string) *body {
	if ch := l.loadChannel(channelKey); ch != nil {
		return ch.current.Load()
	}
	return nil
}

// find is the fence against the channel's current tag (the leader's reuse
// check), not counted (see goCache.find).
func (l *goLeader) find(r *TagRef) (*body, LookupReason) {
	cur := l.current(r.ChannelKey)
	if cur == nil {
		return nil, LookupMissingRef
	}
	reason := fence(cur, r)
	if reason == LookupHit {
		cur.touch(l.ticks.now())
	}
	return cur, reason
}

// lookupTag is upstream's LookupTag: the body under tagKey (current,
// ephemeral or an older incarnation not yet reclaimed), its access time
// refreshed.
func (l *goLeader) lookupTag(tagKey string) *body {
	v, ok := l.byKey.Load(tagKey)
	if !ok {
		return nil
	}
	b := v.(*body)
	raiseInt64(&b.lastAccess, nowNanos(l.now))
	return b
}

// usable is the current body if a message may use it: no mutation pending
// or failed, and a subscriber version not below authoritative.
func (l *goLeader) usable(channelKey string, authoritative uint64) (*body, error) {
	ch := l.loadChannel(channelKey)
	if ch == nil {
		return nil, ErrNotFound
	}
	if ch.dirty.Load() != 0 {
		return nil, ErrDirty
	}
	cur := ch.current.Load()
	if cur == nil {
		return nil, ErrNotFound
	}
	if cur.smv < authoritative {
		return nil, ErrLagging
	}
	return cur, nil
}

func (l *goLeader) isDirty(channelKey string) bool {
	ch := l.loadChannel(channelKey)
	return ch != nil && ch.dirty.Load() != 0
}

// goMutation is one logical membership change (see Mutation).
type goMutation struct {
	l       *goLeader
	ch      *leaderChannel
	reset   bool
	adds    map[uint64][]string
	removes map[string]struct{}
	open    bool
}

// beginMutation marks the channel dirty, before the host writes its store.
func (l *goLeader) beginMutation(channelKey string) *goMutation {
	ch := l.channel(channelKey)
	ch.mu.Lock()
	ch.dirty.Store(ch.dirty.Load() + 1)
	ch.mu.Unlock()
	return &goMutation{l: l, ch: ch, adds: map[uint64][]string{}, removes: map[string]struct{}{}, open: true}
}

func (m *goMutation) doReset() {
	m.reset = true
	clear(m.adds)
	clear(m.removes)
}

func (m *goMutation) add(nodeID uint64, uids []string) {
	if _, ok := m.adds[nodeID]; !ok {
		// The node gets a partition, empty if every UID is removed later
		// (as the core's).
		m.adds[nodeID] = nil
	}
	for _, u := range uids {
		delete(m.removes, u)
		m.adds[nodeID] = append(m.adds[nodeID], u)
	}
}

func (m *goMutation) remove(uids []string) {
	for _, u := range uids {
		for n, list := range m.adds {
			kept := list[:0]
			for _, x := range list {
				if x != u {
					kept = append(kept, x)
				}
			}
			m.adds[n] = kept
		}
		m.removes[u] = struct{}{}
	}
}

// commit applies the mutation with the store's version: one tag version
// bump however many chunks it had, the key unchanged; it clears this
// mutation's dirty mark (or, on an error, leaves the failed flag).
func (m *goMutation) commit(storeVersion uint64) (MutationResult, *body, error) {
	m.open = false
	ch := m.ch
	ch.mu.Lock()
	defer ch.mu.Unlock()
	res, b, err := m.apply(storeVersion)
	d := ch.dirty.Load() - 1
	if err != nil {
		d |= dirtyFailed
	}
	ch.dirty.Store(d)
	return res, b, err
}

// abandon is a failed or partial store write: the channel stays dirty (its
// tag is rebuilt before its next use).
func (m *goMutation) abandon() {
	m.open = false
	m.ch.mu.Lock()
	m.ch.dirty.Store((m.ch.dirty.Load() - 1) | dirtyFailed)
	m.ch.mu.Unlock()
}

func (m *goMutation) apply(storeVersion uint64) (MutationResult, *body, error) {
	cur := m.ch.current.Load()
	if cur == nil {
		return MutationNoTag, nil, nil
	}
	if cur.smv >= storeVersion {
		return MutationAlreadyCurrent, cur, nil
	}
	var partitions []NodePartition
	seen := map[uint64]bool{}
	if !m.reset {
		for _, p := range cur.partitions {
			seen[p.NodeID] = true
			have := make(map[string]bool, len(p.UIDs))
			uids := make([]string, 0, len(p.UIDs))
			for _, u := range p.UIDs {
				if _, gone := m.removes[u]; !gone {
					uids = append(uids, u)
					have[u] = true
				}
			}
			for _, u := range m.adds[p.NodeID] {
				if !have[u] {
					have[u] = true
					uids = append(uids, u)
				}
			}
			if !uidsFit(uids) {
				return 0, nil, ErrTooLarge
			}
			partitions = append(partitions, NodePartition{NodeID: p.NodeID, UIDs: uids})
		}
	}
	nodes := make([]uint64, 0, len(m.adds))
	for n := range m.adds {
		if !seen[n] {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i] < nodes[j] })
	for _, n := range nodes {
		have := map[string]bool{}
		var uids []string
		for _, u := range m.adds[n] {
			if !have[u] {
				have[u] = true
				uids = append(uids, u)
			}
		}
		if !uidsFit(uids) {
			return 0, nil, ErrTooLarge
		}
		partitions = append(partitions, NodePartition{NodeID: n, UIDs: uids})
	}
	sort.SliceStable(partitions, func(i, j int) bool { return partitions[i].NodeID < partitions[j].NodeID })
	now := nowNanos(m.l.now)
	b := newBody(&DeliveryTag{Key: cur.key, ChannelKey: cur.channelKey, TagVersion: cur.tagVersion + 1,
		SubscriberMutationVersion: storeVersion, SourceChannelKey: cur.sourceChannelKey,
		SourceSubscriberMutationVersion: cur.sourceSMV, Topology: cur.topology}, partitions, cur.createdAt, now)
	m.ch.current.Store(b)
	m.l.publish(b)
	return MutationApplied, b, nil
}

// cleanup reclaims up to limit bodies idle past the TTL at now, clearing a
// channel's current tag when it was the body reclaimed.
func (l *goLeader) cleanup(now int64, limit int) CleanupPage {
	var page CleanupPage
	if l.ttl == 0 || limit <= 0 {
		return page
	}
	if limit > CleanupLimitMax {
		limit = CleanupLimitMax
	}
	l.cleaning.Lock()
	defer l.cleaning.Unlock()
	l.ticks.advance(now, l.ttl)
	keys, wrapped := l.roster.page(limit)
	page.Wrapped = wrapped
	for _, e := range keys {
		page.Visited++
		v, ok := l.byKey.Load(e.entry)
		if !ok {
			l.roster.remove(e.slot)
			continue
		}
		b := v.(*body)
		hit, ok := l.ticks.hitBound(b.touched.Load())
		if !ok {
			continue
		}
		last := b.lastAccess.Load()
		if hit > last {
			last = hit
		}
		if !expired(now, last, l.ttl) {
			continue
		}
		if !l.byKey.CompareAndDelete(e.entry, b) {
			continue
		}
		l.roster.remove(e.slot)
		page.Reclaimed++
		l.stats.hold(-1, -int64(b.uidCount))
		if ch := l.loadChannel(b.channelKey); ch != nil && ch.current.CompareAndSwap(b, nil) {
			page.Unlinked++
		}
	}
	l.stats.reclaimed[0].Add(uint64(page.Reclaimed))
	l.stats.reclaimed[1].Add(uint64(page.Unlinked))
	return page
}

// bodies is how many bodies are held by key (a moment's view).
func (l *goLeader) bodies() int {
	n := 0
	l.byKey.Range(func(_, _ any) bool { n++; return true })
	return n
}

// randomTagKey is upstream's default key: 16 random bytes as 32 lowercase
// hex characters, or the hex of an RFC 3339 time if the system has no
// randomness.
func randomTagKey() string {
	var buf [16]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return hex.EncodeToString([]byte(time.Now().Format(time.RFC3339Nano)))
	}
	return hex.EncodeToString(buf[:])
}

// sequentialKeys returns keys <prefix>-1, <prefix>-2, … (the C ABI's
// key_prefix keys; upstream's tests name keys this way).
func sequentialKeys(prefix string) func() string {
	var n atomic.Uint64
	return func() string { return prefix + "-" + strconv.FormatUint(n.Add(1), 10) }
}
