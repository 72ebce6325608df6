//go:build cgo && !wkcore_purego

// The follower hit, inline (the futex shape of the C ABI's wk_tag_cache_lookup_hot;
// docs/TAG.md, "The hit from Go"). A look-up by key finds the channel's held
// state in a Go index (hotChan), loads the cell's generation word from the
// library's memory with Go's own atomic, and, when it equals the generation of
// the body held (hotSnap), runs the package's fence on the held fields, marks a
// hit as the library does (the body's mark raised to the cleanup tick, only
// when older) and counts in the cache's host rows: no crossing, no
// allocation. Anything else — no state yet, another generation, a swap in
// flight, a retired cell — crosses once (wkgo_lookup_hot) and holds what the
// library answers.
//
// # Lifetimes
//
// A hotChan owns a wk_tag_channel handle (the cell, its generation word, and
// the cache's tick and rows stay alive); a hotSnap owns a wk_tag_view (the body,
// its marks, and every byte its fields and UIDs point into stay alive). Both are
// freed by finalizers once unreachable (a snapshot's is on its viewOwner, so
// that nothing else of it outlives the first collection that finds it
// unreachable): a View holds its hotSnap, so a body the
// Go side still reads is never freed under it, whatever the cache reclaims.
// Every access to library memory through one of them is followed by
// runtime.KeepAlive of it. CleanupExpired also pages through the held states
// and drops the snapshots the library has replaced and the channels it retired,
// so the Go side never keeps a reclaimed body for longer than one pass.

package deliverytag

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "tag_cgo.h"
*/
import "C"

import (
	"hash/maphash"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// hotLayoutVersion is the layout this file is written for: the header's, or
// the build fails; the linked library's, or init panics.
const hotLayoutVersion = 1

var (
	_ [C.WK_TAG_HOT_LAYOUT_VERSION - hotLayoutVersion]struct{}
	_ [hotLayoutVersion - C.WK_TAG_HOT_LAYOUT_VERSION]struct{}
	// The host rows are the counter rows rowOfCaller picks from; a reason's
	// code is its counter.
	_ [C.WK_TAG_HOT_HIT_ROWS - statRows]struct{}
	_ [statRows - C.WK_TAG_HOT_HIT_ROWS]struct{}
	_ [C.WK_TAG_HOT_HIT_ROW_COUNTERS - 7]struct{}
)

// hotLayoutVersionOfLibrary asks the linked library for its layout.
func hotLayoutVersionOfLibrary() uint32 { return uint32(C.wk_tag_hot_layout_version()) }

func init() { hotLayoutCheck(hotLayoutVersionOfLibrary()) }

// hotLayoutCheck panics unless lib, the linked library's layout, is the one
// this package was built for: a host must not run the inline hit on words it
// would misread.
func hotLayoutCheck(lib uint32) {
	if lib != C.WK_TAG_HOT_LAYOUT_VERSION {
		panic("deliverytag: the linked libwkcore.a has inline-hit layout " + itoa(uint64(lib)) +
			", this package was built for " + itoa(hotLayoutVersion) +
			": rebuild the library (scripts/go-lib) and this package from one checkout")
	}
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// hotChan is one channel's held state: the cell's handle and words, and the
// snapshot held for inline hits (nil: none yet, or dropped by a sweep).
type hotChan struct {
	key    string
	ch     *C.wk_tag_channel
	word   *uint64        // the cell's generation word
	tick   *uint64        // the cache's tick
	rows   unsafe.Pointer // the cache's first host row
	stride uintptr        // bytes between two rows
	slot   int            // in the cache's hot roster
	snap   atomic.Pointer[hotSnap]
}

// hotSnap is one held body: its view, the generation it belongs to, its fence
// fields (strings and refs pointing into the view's body) and its local
// partition, zero-copy.
type hotSnap struct {
	gen  uint64
	view *C.wk_tag_view
	// own frees view once the snapshot is unreachable. The finalizer is on
	// this small object, which points at no Go memory, and not on the
	// snapshot: a collection that finds an object with a finalizer
	// unreachable keeps it, and everything it reaches, for one more cycle
	// (the finalizer may use any of it). On the snapshot that was its Go
	// copy of the body, its UIDs and its View: under churn every snapshot
	// replaced since the last collection, held again, so the live heap (and
	// with it the time to the next collection, and the library memory the
	// replaced views keep meanwhile) grew with the store rate. Now the
	// snapshot goes in the first collection that finds it unreachable and
	// only this word waits for the finalizer.
	own        *viewOwner
	touched    *uint64
	lastAccess *uint64
	b          body // key, versions, source, topology: what the fence reads
	createdAt  int64
	part       C.wk_tag_partition_view
	hasPart    bool
	// shared is the body as Go memory, made on the first Manager look-up.
	shared atomic.Pointer[DeliveryTag]
	// v is the View every look-up that answers with this snapshot returns:
	// read-only, so goroutines share it, and Release leaves it as it is.
	v View
}

// viewOwner owns one snapshot's view (a finalizer frees it): the snapshot
// is its only holder, and it points at no Go memory.
type viewOwner struct{ view *C.wk_tag_view }

// count adds one look-up of reason to a host row of the caller's.
func (h *hotChan) count(reason LookupReason) {
	row := unsafe.Add(h.rows, uintptr(rowOfCaller())*h.stride+uintptr(reasonIndex(reason))*8)
	atomic.AddUint64((*uint64)(row), 1)
}

// hotIndex is a cache's index of held channel states, and the roster its
// sweep pages through.
type hotIndex struct {
	m      hotMap
	roster roster[*hotChan]
}

// hotMap is the index from channel key to held state: an open-addressing
// table of atomic pointers. A read hashes the key once, loads slots until the
// key or an empty slot, and writes nothing (a sync.Map read costs twice as
// much: it hashes through an interface). Writes — a channel's first look-up,
// a new cell, a sweep's removal — take the mutex; a removed entry leaves a
// tombstone, and a table that fills up is copied into a new one, published
// whole. A reader on a replaced table sees the states as they were, which is
// safe: every hit checks its cell's generation word, and a state the index
// dropped still owns its handles.
type hotMap struct {
	t  atomic.Pointer[hotTable]
	mu sync.Mutex
}

type hotTable struct {
	slots []atomic.Pointer[hotChan]
	mask  uint64
	used  int // live entries and tombstones (under the mutex)
	live  int
}

// hotTomb marks a removed entry (a reader probes past it).
var hotTomb = &hotChan{}

var hotSeed = maphash.MakeSeed()

// Load returns key's state, if indexed.
func (m *hotMap) Load(key string) (*hotChan, bool) {
	t := m.t.Load()
	if t == nil {
		return nil, false
	}
	i := maphash.String(hotSeed, key)
	for n := uint64(0); n <= t.mask; n++ {
		e := t.slots[i&t.mask].Load()
		if e == nil {
			return nil, false
		}
		if e != hotTomb && e.key == key {
			return e, true
		}
		i++
	}
	return nil, false
}

// find is the slot of key's entry, or of the first free one on its probe
// (under the mutex).
func (t *hotTable) find(key string) (slot uint64, e *hotChan) {
	i := maphash.String(hotSeed, key)
	free := ^uint64(0)
	for n := uint64(0); n <= t.mask; n++ {
		j := i & t.mask
		e := t.slots[j].Load()
		if e == nil {
			if free == ^uint64(0) {
				free = j
			}
			return free, nil
		}
		if e == hotTomb {
			if free == ^uint64(0) {
				free = j
			}
		} else if e.key == key {
			return j, e
		}
		i++
	}
	return free, nil
}

// room returns a table with room for one more entry (under the mutex).
func (m *hotMap) room() *hotTable {
	t := m.t.Load()
	if t != nil && (t.used+1)*2 <= len(t.slots) {
		return t
	}
	live := 0
	if t != nil {
		live = t.live
	}
	size := 16
	for size < (live+1)*4 {
		size *= 2
	}
	n := &hotTable{slots: make([]atomic.Pointer[hotChan], size), mask: uint64(size - 1)}
	if t != nil {
		for i := range t.slots {
			if e := t.slots[i].Load(); e != nil && e != hotTomb {
				j, _ := n.find(e.key)
				n.slots[j].Store(e)
				n.used++
				n.live++
			}
		}
	}
	m.t.Store(n)
	return n
}

// LoadOrStore indexes h unless its key has a state; it returns the indexed
// one and whether it was there.
func (m *hotMap) LoadOrStore(h *hotChan) (*hotChan, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.room()
	j, e := t.find(h.key)
	if e != nil {
		return e, true
	}
	if t.slots[j].Load() == nil {
		t.used++
	}
	t.live++
	t.slots[j].Store(h)
	return h, false
}

// CompareAndSwap replaces old with h (both of key) if old is indexed.
func (m *hotMap) CompareAndSwap(key string, old, h *hotChan) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.t.Load()
	if t == nil {
		return false
	}
	if j, e := t.find(key); e == old && e != nil {
		t.slots[j].Store(h)
		return true
	}
	return false
}

// CompareAndDelete removes old (of key) if it is indexed.
func (m *hotMap) CompareAndDelete(key string, old *hotChan) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.t.Load()
	if t == nil {
		return false
	}
	if j, e := t.find(key); e == old && e != nil {
		t.slots[j].Store(hotTomb)
		t.live--
		return true
	}
	return false
}

// hotFind is the look-up by key (Cache.Lookup, Check, and a Channel's, with
// withChannel false): inline when the held body is current, else one
// crossing. The snapshot is nil on LookupMissingRef.
func (c *Cache) hotFind(key string, r *TagRef, withChannel bool) (*hotSnap, LookupReason, error) {
	h, ok := c.hot.m.Load(key)
	if !ok {
		return c.hotSlow(key, r, nil)
	}
	s := h.snap.Load()
	// Ordering: Go's atomic load (sequentially consistent, at least the
	// acquire the protocol needs) pairs with the library's release add that
	// ends a swap (ChannelGeneration::end): a finished store or retire is
	// never missed.
	if s == nil || atomic.LoadUint64(h.word) != s.gen {
		runtime.KeepAlive(h)
		return c.hotSlow(key, r, h)
	}
	reason := fence(&s.b, r)
	if reason == LookupHit {
		// The library's mark (DeliveryTag::touch_epoch): raised to the tick
		// only when older, never lowered (raiseUint64), so a hit in the
		// current tick writes nothing. Ordering: relaxed would do, as the
		// library's: the mark publishes nothing and only guides reclamation
		// (a hit that races the cleanup keeps its body through the view it
		// holds).
		if t := atomic.LoadUint64(h.tick); atomic.LoadUint64(s.touched) < t {
			raiseUint64(s.touched, t)
		}
	} else if err := checkLookup(withChannel, r); err != nil {
		// A hit's request matches the held body, so it passes every check; a
		// miss is checked as the crossing would check it.
		return nil, "", err
	}
	h.count(reason)
	runtime.KeepAlive(h)
	runtime.KeepAlive(s)
	return s, reason, nil
}

// hotSlow crosses: the fence in the library, and what it answers held for the
// next inline hits (held: the state the caller found, or nil).
func (c *Cache) hotSlow(key string, r *TagRef, held *hotChan) (*hotSnap, LookupReason, error) {
	wkabi.MaybeGC()
	var known C.uintptr_t
	if held != nil {
		known = C.uintptr_t(uintptr(unsafe.Pointer(held.word)))
	}
	var out C.wkgo_hot_out
	refs := r.Topology.SlotAuthorityRefs
	st := C.wkgo_lookup_hot(C.uintptr_t(uintptr(unsafe.Pointer(c.p))), &out, sp(key), sn(key), sp(r.TagKey), sn(r.TagKey),
		C.uint64_t(r.TagVersion), C.uint64_t(r.SubscriberMutationVersion), sp(r.SourceChannelKey),
		sn(r.SourceChannelKey), C.uint64_t(r.SourceSubscriberMutationVersion),
		C.uint64_t(r.Topology.HashSlotTableVersion), refsPtr(refs), C.size_t(len(refs)), known)
	runtime.KeepAlive(held)
	if st != C.WK_STATUS_OK {
		if out.hot.view != nil {
			// Only wk_tag_view_info can fail after the look-up (it never does
			// on a view just made).
			C.wk_tag_view_free(out.hot.view)
			C.wk_tag_channel_free(out.hot.channel)
		}
		return nil, "", statusErr(st)
	}
	hot := &out.hot
	reason := lookupReasons[hot.reason]
	h := held
	switch {
	case hot.channel != nil:
		h = c.hotHold(key, hot, held)
	case hot.same_cell == 0:
		// No live cell: forget the one held (the sweep unrosters it).
		if held != nil {
			c.hot.m.CompareAndDelete(key, held)
		}
		h = nil
	}
	if hot.view == nil {
		return nil, reason, nil
	}
	s := newHotSnap(&out)
	if h != nil && hot.stable == 1 {
		for {
			cur := h.snap.Load()
			if cur != nil && cur.gen >= s.gen {
				break
			}
			if h.snap.CompareAndSwap(cur, s) {
				break
			}
		}
	}
	return s, reason, nil
}

// hotHold makes the state of the new cell handle in hot, and puts it in the
// index in place of held (nil: of nothing); when another goroutine got there
// first, that one stays and this one is dropped (nil).
func (c *Cache) hotHold(key string, hot *C.wk_tag_hot, held *hotChan) *hotChan {
	h := &hotChan{key: strings.Clone(key), ch: hot.channel, word: (*uint64)(unsafe.Pointer(hot.generation_word)),
		tick: (*uint64)(unsafe.Pointer(hot.tick)), rows: unsafe.Pointer(hot.hit_rows),
		stride: uintptr(hot.hit_row_stride) * 8}
	runtime.SetFinalizer(h, func(h *hotChan) { C.wk_tag_channel_free(h.ch) })
	h.slot = c.hot.roster.add(h)
	var installed bool
	if held != nil {
		installed = c.hot.m.CompareAndSwap(key, held, h)
	} else {
		_, loaded := c.hot.m.LoadOrStore(h)
		installed = !loaded
	}
	if !installed {
		c.hot.roster.remove(h.slot)
		return nil
	}
	return h
}

// newHotSnap holds the body out's view holds (its viewOwner's finalizer
// frees the view once the snapshot is unreachable).
func newHotSnap(out *C.wkgo_hot_out) *hotSnap {
	hot, info := &out.hot, &out.info
	s := &hotSnap{gen: uint64(hot.generation), view: hot.view, touched: (*uint64)(unsafe.Pointer(hot.touched)),
		lastAccess: (*uint64)(unsafe.Pointer(hot.last_access)), createdAt: int64(info.created_at_ns),
		part: hot.partition, hasPart: hot.has_partition == 1}
	s.b.key = cStr(info.key)
	s.b.channelKey = cStr(info.channel_key)
	s.b.tagVersion = uint64(info.tag_version)
	s.b.smv = uint64(info.subscriber_mutation_version)
	s.b.sourceChannelKey = cStr(info.source_channel_key)
	s.b.sourceSMV = uint64(info.source_subscriber_mutation_version)
	s.b.topology.HashSlotTableVersion = uint64(info.hash_slot_table_version)
	if info.ref_count != 0 {
		s.b.topology.SlotAuthorityRefs = unsafe.Slice((*SlotAuthorityRef)(unsafe.Pointer(info.refs)), int(info.ref_count))
	}
	s.b.uidCount = int(hot.partition.uid_count)
	s.v = View{s: s, nparts: 1, count: int(hot.partition.uid_count)}
	s.v.out.view = hot.view
	s.v.out.part = hot.partition
	s.own = &viewOwner{view: hot.view}
	runtime.SetFinalizer(s.own, func(o *viewOwner) { C.wk_tag_view_free(o.view) })
	return s
}

// cStr is the library's string in place: valid while the view it came from is.
func cStr(s C.wk_str) string {
	if s.len == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Pointer(s.ptr)), int(s.len))
}

// sharedTag is the body as upstream's LookupLocalPartitionRef returns it:
// Go memory shared by every look-up of this snapshot (read-only), made once.
func (s *hotSnap) sharedTag() DeliveryTag {
	t := s.shared.Load()
	if t == nil {
		t = &DeliveryTag{Key: strings.Clone(s.b.key), ChannelKey: strings.Clone(s.b.channelKey),
			TagVersion: s.b.tagVersion, SubscriberMutationVersion: s.b.smv,
			SourceChannelKey: strings.Clone(s.b.sourceChannelKey), SourceSubscriberMutationVersion: s.b.sourceSMV,
			Topology: s.b.topology.Clone(), CreatedAt: timeOf(s.createdAt)}
		if s.hasPart {
			pv := partView{s.part}
			t.Partitions = []NodePartition{{NodeID: uint64(s.part.node_id), UIDs: pv.copyUIDs()}}
		}
		if !s.shared.CompareAndSwap(nil, t) {
			t = s.shared.Load()
		}
	}
	out := *t
	out.LastAccess = timeOf(int64(atomic.LoadUint64(s.lastAccess)))
	runtime.KeepAlive(s)
	return out
}

// hotCurrentRef is CurrentRef from the held snapshot, inline, when it is
// still the channel's current body (its generation is the cell's): the
// strings of the snapshot's Go copy and a copy of its topology, as upstream's
// CurrentRef allocates. False: nothing current is held (the caller crosses).
func (c *Cache) hotCurrentRef(key string) (TagRef, bool) {
	h, ok := c.hot.m.Load(key)
	if !ok {
		return TagRef{}, false
	}
	s := h.snap.Load()
	// Ordering: as hotFind's load of the same word.
	if s == nil || atomic.LoadUint64(h.word) != s.gen {
		runtime.KeepAlive(h)
		return TagRef{}, false
	}
	t := s.sharedTag()
	runtime.KeepAlive(h)
	return TagRef{ChannelKey: t.ChannelKey, TagKey: t.Key, TagVersion: t.TagVersion,
		SubscriberMutationVersion: t.SubscriberMutationVersion, SourceChannelKey: t.SourceChannelKey,
		SourceSubscriberMutationVersion: t.SourceSubscriberMutationVersion, Topology: t.Topology.Clone()}, true
}

// hotTagOf is LookupTag's copy made from the held snapshot's Go copy when h
// holds the very body the snapshot holds (the same key bytes in the
// library's memory: a held view keeps its body, so no other body has that
// address): upstream's clone, without copying strings out of the library.
func (c *Cache) hotTagOf(key string, h *C.wk_tag_view) (DeliveryTag, bool) {
	held, ok := c.hot.m.Load(key)
	if !ok {
		return DeliveryTag{}, false
	}
	s := held.snap.Load()
	runtime.KeepAlive(held)
	if s == nil || s.b.key == "" {
		return DeliveryTag{}, false
	}
	info := viewInfo(h)
	if info.key.len == 0 || unsafe.Pointer(info.key.ptr) != unsafe.Pointer(unsafe.StringData(s.b.key)) {
		runtime.KeepAlive(s)
		return DeliveryTag{}, false
	}
	like := s.sharedTag()
	runtime.KeepAlive(s)
	return cloneOf(&like, h), true
}

// hotSweep pages through up to limit held states (after a cleanup page):
// a retired cell's state leaves the index, a replaced snapshot is dropped.
func (c *Cache) hotSweep(limit int) {
	page, _ := c.hot.roster.page(limit)
	for _, e := range page {
		h := e.entry
		w := atomic.LoadUint64(h.word)
		if w&C.WK_TAG_GEN_RETIRED != 0 {
			c.hot.m.CompareAndDelete(h.key, h)
			c.hot.roster.remove(e.slot)
		} else if s := h.snap.Load(); s != nil && s.gen != w {
			h.snap.CompareAndSwap(s, nil)
		}
		runtime.KeepAlive(h)
	}
}

// hotView is the View of s: one per snapshot, shared by its look-ups (its
// methods only read it), so a hit takes nothing from a pool.
func hotView(s *hotSnap) *View { return &s.v }
