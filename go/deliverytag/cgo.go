//go:build cgo && !wkcore_purego

// The cgo build: Cache and Leader over the Rust core's delivery-tag C ABI
// (wk_tag_*). The tags, their channel cells, the stale-store rule, the
// fence, the dirty lifecycle and the cleanup all live in the core; Go
// checks arguments in the ABI's order (limits.go), copies what a write
// keeps into one C allocation, and reads bodies through views.
//
// # The look-up path
//
// A look-up is one C call (wkgo_lookup in tag_cgo.h): it frees the C view a
// recycled View still held, runs the fence and, for Lookup, writes the new
// view handle and its first partition straight into the pooled View. UIDs
// are then read from the library's memory without a copy or another call.
// Check asks for no view: nothing is allocated and no reference count is
// touched. No Go memory holding a Go pointer crosses: strings cross as
// (pointer, length) arguments, read during the call only.
//
// # Handles
//
// Cache, Channel and Leader take no in-flight count: a count is a write to
// one shared cache line per call, which would serialize parallel look-ups.
// Close marks the wrapper closed (every later call returns
// ErrHandleClosed), and the C reference is dropped by a finalizer once the
// wrapper is unreachable: every call keeps its wrapper reachable until the
// call returns (runtime.KeepAlive), so no call can meet a freed handle.
// Views and Mutations have one owner and free their C handle themselves.

package deliverytag

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "tag_cgo.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
	"github.com/wukongim/wkcore/go/internal/wkabi"
)

// Implementation names the build: "rust" here, where the Rust core is
// linked; "go" in the pure-Go build (CGO_ENABLED=0, or the wkcore_purego
// tag).
const Implementation = "rust"

// The Go constants and layouts are the header's; the array lengths are
// negative (a compile error) otherwise.
var (
	_ [C.WK_TAG_STR_MAX - KeyMax]struct{}
	_ [KeyMax - C.WK_TAG_STR_MAX]struct{}
	_ [C.WK_TAG_REFS_MAX - RefsMax]struct{}
	_ [RefsMax - C.WK_TAG_REFS_MAX]struct{}
	_ [C.WK_TAG_PARTITIONS_MAX - PartitionsMax]struct{}
	_ [PartitionsMax - C.WK_TAG_PARTITIONS_MAX]struct{}
	_ [C.WK_TAG_UIDS_MAX - UIDsMax]struct{}
	_ [UIDsMax - C.WK_TAG_UIDS_MAX]struct{}
	_ [C.WK_TAG_CLEANUP_LIMIT_MAX - CleanupLimitMax]struct{}
	_ [CleanupLimitMax - C.WK_TAG_CLEANUP_LIMIT_MAX]struct{}
	_ [C.WK_TAG_RPC_SERVICE_ID - DeliveryTagRPCServiceID]struct{}
	_ [DeliveryTagRPCServiceID - C.WK_TAG_RPC_SERVICE_ID]struct{}

	// SlotAuthorityRef is wk_tag_slot_ref: a topology's refs cross as they
	// are.
	_ [unsafe.Sizeof(SlotAuthorityRef{}) - C.sizeof_wk_tag_slot_ref]struct{}
	_ [C.sizeof_wk_tag_slot_ref - unsafe.Sizeof(SlotAuthorityRef{})]struct{}
	_ [unsafe.Offsetof(SlotAuthorityRef{}.LeaderNodeID) - unsafe.Offsetof(C.wk_tag_slot_ref{}.leader_node_id)]struct{}
	_ [unsafe.Offsetof(C.wk_tag_slot_ref{}.leader_node_id) - unsafe.Offsetof(SlotAuthorityRef{}.LeaderNodeID)]struct{}
	_ [unsafe.Offsetof(SlotAuthorityRef{}.ConfigEpoch) - unsafe.Offsetof(C.wk_tag_slot_ref{}.config_epoch)]struct{}
	_ [unsafe.Offsetof(C.wk_tag_slot_ref{}.config_epoch) - unsafe.Offsetof(SlotAuthorityRef{}.ConfigEpoch)]struct{}
	_ [unsafe.Offsetof(SlotAuthorityRef{}.BalanceVersion) - unsafe.Offsetof(C.wk_tag_slot_ref{}.balance_version)]struct{}
	_ [unsafe.Offsetof(C.wk_tag_slot_ref{}.balance_version) - unsafe.Offsetof(SlotAuthorityRef{}.BalanceVersion)]struct{}

	// The look-up reasons are lookupReasons' indexes; the mutation results
	// MutationResult's values.
	_ [C.WK_TAG_LOOKUP_HIT]struct{}
	_ [1 - C.WK_TAG_LOOKUP_MISSING_REF]struct{}
	_ [C.WK_TAG_LOOKUP_MISSING_REF - 1]struct{}
	_ [2 - C.WK_TAG_LOOKUP_MISSING_TAG]struct{}
	_ [C.WK_TAG_LOOKUP_MISSING_TAG - 2]struct{}
	_ [3 - C.WK_TAG_LOOKUP_TAG_KEY_MISMATCH]struct{}
	_ [C.WK_TAG_LOOKUP_TAG_KEY_MISMATCH - 3]struct{}
	_ [4 - C.WK_TAG_LOOKUP_STALE_REQUEST]struct{}
	_ [C.WK_TAG_LOOKUP_STALE_REQUEST - 4]struct{}
	_ [5 - C.WK_TAG_LOOKUP_NEWER_REQUEST]struct{}
	_ [C.WK_TAG_LOOKUP_NEWER_REQUEST - 5]struct{}
	_ [6 - C.WK_TAG_LOOKUP_TOPOLOGY_MISMATCH]struct{}
	_ [C.WK_TAG_LOOKUP_TOPOLOGY_MISMATCH - 6]struct{}
	_ [C.WK_TAG_MUTATION_APPLIED - uint8(MutationApplied)]struct{}
	_ [uint8(MutationApplied) - C.WK_TAG_MUTATION_APPLIED]struct{}
	_ [C.WK_TAG_MUTATION_NO_TAG - uint8(MutationNoTag)]struct{}
	_ [uint8(MutationNoTag) - C.WK_TAG_MUTATION_NO_TAG]struct{}
	_ [C.WK_TAG_MUTATION_ALREADY_CURRENT - uint8(MutationAlreadyCurrent)]struct{}
	_ [uint8(MutationAlreadyCurrent) - C.WK_TAG_MUTATION_ALREADY_CURRENT]struct{}

	// The status codes.
	_ [C.WK_STATUS_TAG_INVALID_UTF8 - codeInvalidUTF8]struct{}
	_ [codeInvalidUTF8 - C.WK_STATUS_TAG_INVALID_UTF8]struct{}
	_ [C.WK_STATUS_TAG_TOO_LARGE - codeTooLarge]struct{}
	_ [codeTooLarge - C.WK_STATUS_TAG_TOO_LARGE]struct{}
	_ [C.WK_STATUS_TAG_UNASSIGNED_SLOT - codeUnassignedSlot]struct{}
	_ [codeUnassignedSlot - C.WK_STATUS_TAG_UNASSIGNED_SLOT]struct{}
	_ [C.WK_STATUS_TAG_LENGTH_MISMATCH - codeLengthMismatch]struct{}
	_ [codeLengthMismatch - C.WK_STATUS_TAG_LENGTH_MISMATCH]struct{}
	_ [C.WK_STATUS_TAG_INVALID_CONFIG - codeInvalidConfig]struct{}
	_ [codeInvalidConfig - C.WK_STATUS_TAG_INVALID_CONFIG]struct{}
	_ [C.WK_STATUS_TAG_UNKNOWN_OP - codeUnknownOp]struct{}
	_ [codeUnknownOp - C.WK_STATUS_TAG_UNKNOWN_OP]struct{}
	_ [C.WK_STATUS_TAG_DIRTY - codeDirty]struct{}
	_ [codeDirty - C.WK_STATUS_TAG_DIRTY]struct{}
	_ [C.WK_STATUS_TAG_LAGGING - codeLagging]struct{}
	_ [codeLagging - C.WK_STATUS_TAG_LAGGING]struct{}
	_ [C.WK_STATUS_TAG_INVALID_FRAME - codeInvalidFrame]struct{}
	_ [codeInvalidFrame - C.WK_STATUS_TAG_INVALID_FRAME]struct{}
	_ [C.WK_STATUS_TAG_INVALID_REQUEST_CODEC - codeInvalidRequestCodec]struct{}
	_ [codeInvalidRequestCodec - C.WK_STATUS_TAG_INVALID_REQUEST_CODEC]struct{}
	_ [C.WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING - codeUIDsCountExceeds]struct{}
	_ [codeUIDsCountExceeds - C.WK_STATUS_TAG_UIDS_COUNT_EXCEEDS_REMAINING]struct{}
)

// statusErr maps a status to the package's error: nil for OK, the
// refusals a call may meet without a look-up.
func statusErr(st C.wk_status) error {
	switch st {
	case C.WK_STATUS_OK:
		return nil
	case C.WK_STATUS_TAG_INVALID_UTF8:
		return ErrInvalidUTF8
	case C.WK_STATUS_INVALID_ARGUMENT:
		return ErrInvalidArgument
	case C.WK_STATUS_NOT_FOUND:
		return ErrNotFound
	case C.WK_STATUS_TAG_TOO_LARGE:
		return ErrTooLarge
	case C.WK_STATUS_TAG_DIRTY:
		return ErrDirty
	case C.WK_STATUS_TAG_LAGGING:
		return ErrLagging
	case C.WK_STATUS_TAG_INVALID_CONFIG:
		return ErrInvalidConfig
	}
	return status.Lookup(status.Code(st))
}

// sp points at s's bytes: Go memory without pointers, which C reads during
// the call only. An empty string's pointer is never read (its length is 0).
func sp(s string) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(unsafe.StringData(s))) }

func sn(s string) C.size_t { return C.size_t(len(s)) }

// refsPtr points at a topology's refs (pointer-free, of wk_tag_slot_ref's
// layout).
func refsPtr(refs []SlotAuthorityRef) *C.wk_tag_slot_ref {
	return (*C.wk_tag_slot_ref)(unsafe.Pointer(unsafe.SliceData(refs)))
}

// clockSync keeps a manual-clock handle's clock at Now's reading (tests):
// base is Now's reading at creation (the clock's start), synced how far past
// it the C clock was moved. Now only moves forward; a reading behind the C
// clock leaves it.
type clockSync struct {
	now    func() time.Time
	base   int64
	synced atomic.Int64
}

func newClockSync(now func() time.Time) (*clockSync, C.uint32_t, C.uint64_t) {
	if now == nil {
		return nil, C.WK_TAG_CLOCK_UNIX, 0
	}
	s := &clockSync{now: now, base: unixNanos(now())}
	return s, C.WK_TAG_CLOCK_MANUAL, C.uint64_t(s.base)
}

// sync moves the C clock to Now's reading through advance.
func (s *clockSync) sync(advance func(ns uint64)) {
	if s == nil {
		return
	}
	d := unixNanos(s.now()) - s.base
	for {
		last := s.synced.Load()
		if d <= last {
			return
		}
		if s.synced.CompareAndSwap(last, d) {
			advance(uint64(d - last))
			return
		}
	}
}

// cblock is one C allocation that holds what a write hands C: the ABI's
// input structs, their arrays and every byte they point at, so that C
// memory holds only C pointers. Freed after the call.
//
// The block is zeroed memory (calloc), never malloc's: it is filled with
// Go's typed stores, and a store of a pointer field runs Go's write barrier
// while a collection marks, which reads the word it overwrites and marks
// what that word points at. Memory malloc hands back holds whatever its last
// user left there — another call's copy of a Go string's address, say — and
// a stale Go address read that way makes the collector mark a freed object
// ("found pointer to free object", "found bad pointer in Go heap").
type cblock struct {
	base unsafe.Pointer
	off  uintptr
	size uintptr
}

func newCBlock(size uintptr) *cblock {
	if size == 0 {
		size = 1
	}
	p := C.calloc(1, C.size_t(size))
	if p == nil {
		panic("deliverytag: out of C memory")
	}
	return &cblock{base: p, size: size}
}

// take returns n bytes aligned to align (a power of 2).
func (b *cblock) take(n, align uintptr) unsafe.Pointer {
	b.off = (b.off + align - 1) &^ (align - 1)
	if b.off+n > b.size {
		panic("deliverytag: C block overflow")
	}
	p := unsafe.Add(b.base, b.off)
	b.off += n
	return p
}

func (b *cblock) str(s string) C.wk_str {
	if len(s) == 0 {
		return C.wk_str{}
	}
	p := b.take(uintptr(len(s)), 1)
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return C.wk_str{ptr: (*C.uint8_t)(p), len: C.size_t(len(s))}
}

func (b *cblock) refs(refs []SlotAuthorityRef) (*C.wk_tag_slot_ref, C.size_t) {
	if len(refs) == 0 {
		return nil, 0
	}
	p := b.take(uintptr(len(refs))*C.sizeof_wk_tag_slot_ref, 8)
	copy(unsafe.Slice((*SlotAuthorityRef)(p), len(refs)), refs)
	return (*C.wk_tag_slot_ref)(p), C.size_t(len(refs))
}

func (b *cblock) uids(uids []string) (*C.wk_str, C.size_t) {
	if len(uids) == 0 {
		return nil, 0
	}
	p := b.take(uintptr(len(uids))*C.sizeof_wk_str, 8)
	out := unsafe.Slice((*C.wk_str)(p), len(uids))
	for i, u := range uids {
		out[i] = b.str(u)
	}
	return (*C.wk_str)(p), C.size_t(len(uids))
}

func (b *cblock) partitions(parts []NodePartition) (*C.wk_tag_partition_in, C.size_t) {
	if len(parts) == 0 {
		return nil, 0
	}
	p := b.take(uintptr(len(parts))*C.sizeof_wk_tag_partition_in, 8)
	out := unsafe.Slice((*C.wk_tag_partition_in)(p), len(parts))
	for i, part := range parts {
		out[i].node_id = C.uint64_t(part.NodeID)
		out[i].uids, out[i].uid_count = b.uids(part.UIDs)
	}
	return (*C.wk_tag_partition_in)(p), C.size_t(len(parts))
}

func (b *cblock) free() { C.free(b.base) }

// blockSize bounds what a tag's strings, refs and partitions take in a
// cblock, with room for alignment.
func blockSize(structs uintptr, keys []string, refs int, parts []NodePartition) uintptr {
	n := structs + 64 + uintptr(refs)*C.sizeof_wk_tag_slot_ref
	for _, k := range keys {
		n += uintptr(len(k))
	}
	for _, p := range parts {
		n += C.sizeof_wk_tag_partition_in + 8 + uintptr(len(p.UIDs))*C.sizeof_wk_str
		for _, u := range p.UIDs {
			n += uintptr(len(u))
		}
	}
	return n
}

// tagIn copies t into a cblock as a wk_tag_in, with only the partitions in
// parts (a cache store hands C the one it keeps).
func tagIn(t *DeliveryTag, parts []NodePartition) (*cblock, *C.wk_tag_in) {
	b := newCBlock(blockSize(C.sizeof_wk_tag_in, []string{t.Key, t.ChannelKey, t.SourceChannelKey},
		len(t.Topology.SlotAuthorityRefs), parts))
	in := (*C.wk_tag_in)(b.take(C.sizeof_wk_tag_in, 8))
	*in = C.wk_tag_in{}
	in.key = b.str(t.Key)
	in.channel_key = b.str(t.ChannelKey)
	in.tag_version = C.uint64_t(t.TagVersion)
	in.subscriber_mutation_version = C.uint64_t(t.SubscriberMutationVersion)
	in.source_channel_key = b.str(t.SourceChannelKey)
	in.source_subscriber_mutation_version = C.uint64_t(t.SourceSubscriberMutationVersion)
	in.hash_slot_table_version = C.uint64_t(t.Topology.HashSlotTableVersion)
	in.refs, in.ref_count = b.refs(t.Topology.SlotAuthorityRefs)
	in.partitions, in.partition_count = b.partitions(parts)
	in.created_at_ns = C.int64_t(unixNanos(t.CreatedAt))
	in.last_access_ns = C.int64_t(unixNanos(t.LastAccess))
	return b, in
}

// localParts is the partition a cache keeps of t: the first of node, if
// any (the core keeps the same one, so the others need not cross).
func localParts(t *DeliveryTag, node uint64) []NodePartition {
	for i := range t.Partitions {
		if t.Partitions[i].NodeID == node {
			return t.Partitions[i : i+1]
		}
	}
	return nil
}

// buildIn copies r into a cblock as a wk_tag_build_request.
func buildIn(r *BuildRequest) (*cblock, *C.wk_tag_build_request) {
	b := newCBlock(blockSize(C.sizeof_wk_tag_build_request, []string{r.ChannelKey, r.SourceChannelKey},
		len(r.Topology.SlotAuthorityRefs), r.Partitions))
	in := (*C.wk_tag_build_request)(b.take(C.sizeof_wk_tag_build_request, 8))
	*in = C.wk_tag_build_request{}
	in.channel_key = b.str(r.ChannelKey)
	in.subscriber_mutation_version = C.uint64_t(r.SubscriberMutationVersion)
	in.source_channel_key = b.str(r.SourceChannelKey)
	in.source_subscriber_mutation_version = C.uint64_t(r.SourceSubscriberMutationVersion)
	in.hash_slot_table_version = C.uint64_t(r.Topology.HashSlotTableVersion)
	in.refs, in.ref_count = b.refs(r.Topology.SlotAuthorityRefs)
	in.partitions, in.partition_count = b.partitions(r.Partitions)
	if r.MintFreshKey {
		in.mint_fresh_key = 1
	}
	return b, in
}

func goStr(s C.wk_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN((*C.char)(unsafe.Pointer(s.ptr)), C.int(s.len))
}

func viewInfo(h *C.wk_tag_view) C.wk_tag_info {
	var info C.wk_tag_info
	if st := C.wk_tag_view_info(h, &info, C.sizeof_wk_tag_info); st != C.WK_STATUS_OK {
		panic("deliverytag: wk_tag_view_info: " + statusErr(st).Error())
	}
	return info
}

func infoRef(info *C.wk_tag_info) TagRef {
	r := TagRef{
		ChannelKey:                      goStr(info.channel_key),
		TagKey:                          goStr(info.key),
		TagVersion:                      uint64(info.tag_version),
		SubscriberMutationVersion:       uint64(info.subscriber_mutation_version),
		SourceChannelKey:                goStr(info.source_channel_key),
		SourceSubscriberMutationVersion: uint64(info.source_subscriber_mutation_version),
		Topology:                        PartitionTopologyVersion{HashSlotTableVersion: uint64(info.hash_slot_table_version)},
	}
	if info.ref_count != 0 {
		r.Topology.SlotAuthorityRefs = append([]SlotAuthorityRef(nil),
			unsafe.Slice((*SlotAuthorityRef)(unsafe.Pointer(info.refs)), int(info.ref_count))...)
	}
	return r
}

// viewRef copies the reference of the body h holds.
func viewRef(h *C.wk_tag_view) TagRef {
	info := viewInfo(h)
	return infoRef(&info)
}

// viewTag copies the body h holds.
func viewTag(h *C.wk_tag_view) DeliveryTag {
	info := viewInfo(h)
	r := infoRef(&info)
	t := DeliveryTag{Key: r.TagKey, ChannelKey: r.ChannelKey, TagVersion: r.TagVersion,
		SubscriberMutationVersion: r.SubscriberMutationVersion, SourceChannelKey: r.SourceChannelKey,
		SourceSubscriberMutationVersion: r.SourceSubscriberMutationVersion, Topology: r.Topology,
		CreatedAt: timeOf(int64(info.created_at_ns)), LastAccess: timeOf(int64(info.last_access_ns))}
	if n := int(info.partition_count); n > 0 {
		t.Partitions = make([]NodePartition, n)
		for i := range t.Partitions {
			var p C.wk_tag_partition_view
			if st := C.wk_tag_view_partition(h, C.size_t(i), &p); st != C.WK_STATUS_OK {
				panic("deliverytag: wk_tag_view_partition: " + statusErr(st).Error())
			}
			pv := partView{p}
			t.Partitions[i] = NodePartition{NodeID: uint64(p.node_id), UIDs: pv.copyUIDs()}
		}
	}
	return t
}

// takeTag copies the body h holds and frees h.
func takeTag(h *C.wk_tag_view) DeliveryTag {
	t := viewTag(h)
	C.wk_tag_view_free(h)
	return t
}

// takeRef copies the reference of the body h holds and frees h.
func takeRef(h *C.wk_tag_view) TagRef {
	r := viewRef(h)
	C.wk_tag_view_free(h)
	return r
}

// partView is one partition of a view, zero-copy: UID i is bytes[ends[i-1]
// .. ends[i]] in the library's memory, valid while the view lives.
type partView struct {
	p C.wk_tag_partition_view
}

func (p *partView) len() int { return int(p.p.uid_count) }

func (p *partView) uid(i int) string {
	if uint(i) >= uint(p.p.uid_count) {
		panic("deliverytag: UID index out of range")
	}
	ends := unsafe.Slice((*uint32)(unsafe.Pointer(p.p.ends)), int(p.p.uid_count))
	var start uint32
	if i > 0 {
		start = ends[i-1]
	}
	if ends[i] == start {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(p.p.bytes), start)), int(ends[i]-start))
}

// copyUIDs copies the partition's UIDs (nil when it has none).
func (p *partView) copyUIDs() []string {
	n := p.len()
	if n == 0 {
		return nil
	}
	all := string(unsafe.Slice((*byte)(unsafe.Pointer(p.p.bytes)), int(p.p.bytes_len)))
	ends := unsafe.Slice((*uint32)(unsafe.Pointer(p.p.ends)), n)
	out := make([]string, n)
	var start uint32
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// View is one look-up's hold on a cached body: zero-copy access to its
// UIDs, valid until Release. A View is for one goroutine at a time; it must
// not be used after Release (it is recycled).
type View struct {
	// out is written by C: the view handle, its first partition, the
	// reason.
	out C.wkgo_lookup_out
	// stale is the handle of a released view, freed by the next look-up
	// that recycles this View (in the same C call) or by the finalizer.
	stale *C.wk_tag_view
	// nparts is the number of partitions, -1 until read (a leader's view).
	nparts int
	count  int
	parts  []partView
	// s is the snapshot this View belongs to when it is a snapshot's own
	// (hot_cgo.go): the snapshot owns the C view out.view names.
	s *hotSnap
}

var viewPool = sync.Pool{New: func() any {
	v := &View{}
	// The safety net for a View dropped unreleased, or recycled and then
	// dropped by the pool.
	runtime.SetFinalizer(v, func(v *View) {
		if v.s == nil {
			C.wk_tag_view_free(v.out.view)
		}
		C.wk_tag_view_free(v.stale)
	})
	return v
}}

// lookupKind names the handle of a look-up (WKGO_*).
type lookupKind C.int

const (
	onCache   lookupKind = C.WKGO_CACHE
	onChannel lookupKind = C.WKGO_CHANNEL
	onLeader  lookupKind = C.WKGO_LEADER
)

// lookupCall is one look-up: into v when it is not nil (the view and its
// first partition), the reason only otherwise. One C call.
func lookupCall(kind lookupKind, handle unsafe.Pointer, v *View, r *TagRef) (LookupReason, error) {
	wkabi.MaybeGC()
	var out *C.uint64_t
	var stale C.uintptr_t
	if v != nil {
		out = (*C.uint64_t)(unsafe.Pointer(&v.out))
		stale = C.uintptr_t(uintptr(unsafe.Pointer(v.stale)))
		v.stale = nil
	}
	refs := r.Topology.SlotAuthorityRefs
	ret := uint32(C.wkgo_lookup(C.int(kind), C.uintptr_t(uintptr(handle)), stale, out,
		sp(r.ChannelKey), sn(r.ChannelKey), sp(r.TagKey), sn(r.TagKey), C.uint64_t(r.TagVersion),
		C.uint64_t(r.SubscriberMutationVersion), sp(r.SourceChannelKey), sn(r.SourceChannelKey),
		C.uint64_t(r.SourceSubscriberMutationVersion), C.uint64_t(r.Topology.HashSlotTableVersion),
		refsPtr(refs), C.size_t(len(refs))))
	if st := C.wk_status(ret >> 8); st != C.WK_STATUS_OK {
		return "", statusErr(st)
	}
	return lookupReasons[ret&0xff], nil
}

// lookupView runs a look-up into a pooled View: nil on LookupMissingRef
// and on an error.
func lookupView(kind lookupKind, handle unsafe.Pointer, r *TagRef) (*View, LookupReason, error) {
	v := viewPool.Get().(*View)
	reason, err := lookupCall(kind, handle, v, r)
	if err != nil || v.out.view == nil {
		v.Release()
		return nil, reason, err
	}
	v.count, v.nparts = -1, -1
	if kind != onLeader {
		// A cache's body has exactly one partition, the local node's.
		v.nparts, v.count = 1, int(v.out.part.uid_count)
	}
	return v, reason, nil
}

// Release lets the body go and recycles the view; its C handle is freed by
// the next look-up that reuses this View, in the same C call. Strings read
// from it point into the library's memory and must not be used after
// Release (copy them, or use UIDs).
func (v *View) Release() {
	if v == nil {
		return
	}
	if v.s != nil {
		// A snapshot's own View (hot_cgo.go), shared by its look-ups and
		// kept with it: nothing to recycle.
		return
	}
	if v.stale != nil {
		C.wk_tag_view_free(v.stale)
	}
	v.stale = v.out.view
	v.out = C.wkgo_lookup_out{}
	v.parts = v.parts[:0]
	viewPool.Put(v)
}

func (v *View) held() bool { return v != nil && v.out.view != nil }

// load reads the partition count, UID count and partitions of a leader's
// view (one info call and one per partition, the first time).
func (v *View) load() {
	if v.nparts >= 0 && (v.nparts <= 1 || len(v.parts) == v.nparts) {
		return
	}
	info := viewInfo(v.out.view)
	v.nparts, v.count = int(info.partition_count), int(info.uid_count)
	v.parts = v.parts[:0]
	for i := 0; i < v.nparts; i++ {
		var p partView
		if i == 0 {
			p = partView{v.out.part}
		} else if st := C.wk_tag_view_partition(v.out.view, C.size_t(i), &p.p); st != C.WK_STATUS_OK {
			panic("deliverytag: wk_tag_view_partition: " + statusErr(st).Error())
		}
		v.parts = append(v.parts, p)
	}
	runtime.KeepAlive(v)
}

func (v *View) part(i int) *partView {
	if v.nparts == 1 {
		if i != 0 {
			panic("deliverytag: View.Partition index out of range")
		}
		return (*partView)(unsafe.Pointer(&v.out.part))
	}
	v.load()
	return &v.parts[i]
}

// Ref returns a copy of the body's reference.
func (v *View) Ref() TagRef {
	if !v.held() {
		return TagRef{}
	}
	return viewRef(v.out.view)
}

// Tag returns a deep copy of the body.
func (v *View) Tag() DeliveryTag {
	if !v.held() {
		return DeliveryTag{}
	}
	return viewTag(v.out.view)
}

// shared is the body as upstream's LookupLocalPartitionRef returns it: in
// this build a copy (the body lives in the library's memory).
func (v *View) shared() DeliveryTag {
	if v != nil && v.s != nil {
		// An inline look-up's: the snapshot's Go copy, made once.
		return v.s.sharedTag()
	}
	return v.Tag()
}

// TagVersion returns the body's tag version.
func (v *View) TagVersion() uint64 {
	if !v.held() {
		return 0
	}
	if v.s != nil {
		return v.s.b.tagVersion
	}
	info := viewInfo(v.out.view)
	return uint64(info.tag_version)
}

// SubscriberMutationVersion returns the body's subscriber mutation version.
func (v *View) SubscriberMutationVersion() uint64 {
	if !v.held() {
		return 0
	}
	if v.s != nil {
		return v.s.b.smv
	}
	info := viewInfo(v.out.view)
	return uint64(info.subscriber_mutation_version)
}

// Len returns how many UIDs the body holds across its partitions (a
// cache's body has one, the local node's).
func (v *View) Len() int {
	if !v.held() {
		return 0
	}
	v.load()
	return v.count
}

// UID returns the i-th UID across the partitions, in order, without a
// copy: the string points into the library's memory and is valid until
// Release. It panics if i is out of range.
func (v *View) UID(i int) string {
	if v.nparts == 1 {
		return (*partView)(unsafe.Pointer(&v.out.part)).uid(i)
	}
	v.load()
	for j := range v.parts {
		if n := v.parts[j].len(); i < n {
			return v.parts[j].uid(i)
		} else {
			i -= n
		}
	}
	panic("deliverytag: View.UID index out of range")
}

// UIDs returns a copy of every UID across the partitions, in order.
func (v *View) UIDs() []string {
	if !v.held() {
		return nil
	}
	v.load()
	if v.nparts == 1 {
		return (*partView)(unsafe.Pointer(&v.out.part)).copyUIDs()
	}
	out := make([]string, 0, v.count)
	for j := range v.parts {
		out = append(out, v.parts[j].copyUIDs()...)
	}
	return out
}

// Partitions returns how many partitions the body has.
func (v *View) Partitions() int {
	if !v.held() {
		return 0
	}
	v.load()
	return v.nparts
}

// Partition returns the i-th partition, zero-copy. It panics if i is out of
// range.
func (v *View) Partition(i int) PartitionView {
	if !v.held() {
		panic("deliverytag: View.Partition of an empty view")
	}
	return PartitionView{p: v.part(i), node: uint64(v.part(i).p.node_id)}
}

// PartitionForNode returns nodeID's partition, zero-copy, or an empty one
// for nodeID if the body has none.
func (v *View) PartitionForNode(nodeID uint64) PartitionView {
	if v.held() {
		v.load()
		for i := 0; i < v.nparts; i++ {
			if p := v.part(i); uint64(p.p.node_id) == nodeID {
				return PartitionView{p: p, node: nodeID}
			}
		}
	}
	return PartitionView{node: nodeID}
}

// PartitionView is one partition of a View, valid while the View is held.
type PartitionView struct {
	p    *partView
	node uint64
}

// NodeID returns the node that delivers to the partition's UIDs.
func (p PartitionView) NodeID() uint64 { return p.node }

// Len returns how many UIDs the partition holds.
func (p PartitionView) Len() int {
	if p.p == nil {
		return 0
	}
	return p.p.len()
}

// UID returns the i-th UID without a copy (valid until the View's
// Release). It panics if i is out of range.
func (p PartitionView) UID(i int) string {
	if p.p == nil {
		panic("deliverytag: PartitionView.UID of an empty partition")
	}
	return p.p.uid(i)
}

// UIDs returns a copy of the partition's UIDs.
func (p PartitionView) UIDs() []string {
	if p.p == nil {
		return nil
	}
	return p.p.copyUIDs()
}

// Cache is the follower's partition cache (see the package docs). Its
// methods are safe for concurrent use.
type Cache struct {
	p      *C.wk_tag_cache // set at construction, never written again
	local  uint64
	clock  *clockSync
	closed atomic.Bool
	// hot holds what inline look-ups hit on (hot_cgo.go).
	hot hotIndex
}

// NewCache creates an empty cache: ErrInvalidConfig for a LocalNodeID of 0.
func NewCache(opts CacheOptions) (*Cache, error) {
	clock, kind, start := newClockSync(opts.Now)
	o := C.wk_tag_cache_options{struct_size: C.sizeof_wk_tag_cache_options, local_node_id: C.uint64_t(opts.LocalNodeID),
		ttl_ns: C.uint64_t(ttlNanos(opts.TTL)), clock: kind, manual_start_ns: start}
	var p *C.wk_tag_cache
	if st := C.wk_tag_cache_new(&o, nil, &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	c := &Cache{p: p, local: opts.LocalNodeID, clock: clock}
	runtime.SetFinalizer(c, func(c *Cache) { C.wk_tag_cache_free(c.p) })
	return c, nil
}

// enter reports whether a call may run (the cache is set and open).
func (c *Cache) enter() bool {
	if c == nil || c.p == nil || c.closed.Load() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (c *Cache) sync() {
	c.clock.sync(func(ns uint64) { C.wk_tag_cache_advance_clock(c.p, C.uint64_t(ns)) })
}

// LocalNodeID returns the node whose partition the cache keeps (0 for a nil
// cache).
func (c *Cache) LocalNodeID() uint64 {
	if c == nil {
		return 0
	}
	return c.local
}

// Store is upstream's StoreFollowerPartition: it keeps tag's local
// partition (an empty one if tag has none for this node) unless tag is
// stale against the channel's current tag (see the package docs). It
// returns a copy of the stored body and true, or of the current body and
// false when refused.
func (c *Cache) Store(tag DeliveryTag) (DeliveryTag, bool, error) {
	if !c.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	return storeIn(c, unsafe.Pointer(c.p), nil, &tag)
}

// storeIn stores tag through the cache p, or the channel handle ch.
func storeIn(c *Cache, p unsafe.Pointer, ch *C.wk_tag_channel, tag *DeliveryTag) (DeliveryTag, bool, error) {
	if err := checkTagIn(tag, c.local); err != nil {
		return DeliveryTag{}, false, err
	}
	c.sync()
	b, in := tagIn(tag, localParts(tag, c.local))
	var stored C.uint8_t
	var h *C.wk_tag_view
	var st C.wk_status
	if ch != nil {
		st = C.wk_tag_channel_store(ch, in, &stored, &h)
	} else {
		st = C.wk_tag_cache_store((*C.wk_tag_cache)(p), in, &stored, &h)
	}
	b.free()
	if st != C.WK_STATUS_OK {
		return DeliveryTag{}, false, statusErr(st)
	}
	return takeTag(h), stored == 1, nil
}

// Lookup is upstream's LookupLocalPartitionRef: the fence of req against
// the channel's current tag. The View holds the current body, zero-copy, on
// a hit and on every miss from the key check on (callers adopt it on
// LookupStaleRequest and LookupTagKeyMismatch); it is nil on
// LookupMissingRef. Release it when done.
func (c *Cache) Lookup(req TagRef) (*View, LookupReason, error) {
	if !c.enter() {
		return nil, "", ErrHandleClosed
	}
	s, reason, err := c.hotFind(req.ChannelKey, &req, true)
	runtime.KeepAlive(c)
	if s == nil {
		return nil, reason, err
	}
	return hotView(s), reason, nil
}

// Check is Lookup without the view: the reason only (nothing is allocated
// and no reference count is touched).
func (c *Cache) Check(req TagRef) (LookupReason, error) {
	if !c.enter() {
		return "", ErrHandleClosed
	}
	_, reason, err := c.hotFind(req.ChannelKey, &req, true)
	runtime.KeepAlive(c)
	return reason, err
}

// LookupTag is upstream's LookupTag for a follower: a copy of the body
// cached under tagKey for channelKey (bodies are kept per channel; a
// follower holds only the current incarnation), its access time refreshed.
func (c *Cache) LookupTag(channelKey, tagKey string) (DeliveryTag, bool, error) {
	if !c.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	c.sync()
	var h *C.wk_tag_view
	st := C.wkgo_cache_lookup_tag(c.p, sp(channelKey), sn(channelKey), sp(tagKey), sn(tagKey), &h)
	if st == C.WK_STATUS_OK {
		if t, ok := c.hotTagOf(channelKey, h); ok {
			C.wk_tag_view_free(h)
			return t, true, nil
		}
	}
	return tagResult(st, h)
}

// cloneOf is a deep copy of the body like, with the access time of the view
// h of the same body: its strings are like's own (Go strings are immutable),
// its slices fresh, as upstream's clone.
func cloneOf(like *DeliveryTag, h *C.wk_tag_view) DeliveryTag {
	info := viewInfo(h)
	out := *like
	out.Topology = like.Topology.Clone()
	out.Partitions = clonePartitions(like.Partitions)
	out.LastAccess = timeOf(int64(info.last_access_ns))
	return out
}

// sameBody reports whether the view h holds a body with like's key, versions,
// source and counts: for a leader, the body of the same build (only a build
// makes a body of a given key and version).
func sameBody(h *C.wk_tag_view, like *DeliveryTag) bool {
	info := viewInfo(h)
	return cStr(info.key) == like.Key && uint64(info.tag_version) == like.TagVersion &&
		uint64(info.subscriber_mutation_version) == like.SubscriberMutationVersion &&
		cStr(info.source_channel_key) == like.SourceChannelKey &&
		uint64(info.source_subscriber_mutation_version) == like.SourceSubscriberMutationVersion &&
		uint64(info.hash_slot_table_version) == like.Topology.HashSlotTableVersion &&
		int(info.ref_count) == len(like.Topology.SlotAuthorityRefs) && int(info.partition_count) == len(like.Partitions)
}

// lookupTagLike is LookupTag, answered from like (a Go copy of the same
// body, see sameBody) without copying the body out of the library again.
func (l *Leader) lookupTagLike(tagKey string, like *DeliveryTag) (DeliveryTag, bool, bool, error) {
	if like == nil || like.Key != tagKey {
		t, ok, err := l.LookupTag(tagKey)
		return t, ok, false, err
	}
	if !l.enter() {
		return DeliveryTag{}, false, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	l.sync()
	var h *C.wk_tag_view
	st := C.wkgo_leader_lookup_tag(l.p, sp(tagKey), sn(tagKey), &h)
	if st == C.WK_STATUS_OK && sameBody(h, like) {
		t := cloneOf(like, h)
		C.wk_tag_view_free(h)
		return t, true, true, nil
	}
	t, ok, err := tagResult(st, h)
	return t, ok, false, err
}

// tagResult is a view call's result as a copy: NOT_FOUND is (zero, false).
func tagResult(st C.wk_status, h *C.wk_tag_view) (DeliveryTag, bool, error) {
	switch st {
	case C.WK_STATUS_OK:
		return takeTag(h), true, nil
	case C.WK_STATUS_NOT_FOUND:
		return DeliveryTag{}, false, nil
	}
	return DeliveryTag{}, false, statusErr(st)
}

// refResult is a view call's result as a reference: NOT_FOUND is (zero,
// false).
func refResult(st C.wk_status, h *C.wk_tag_view) (TagRef, bool, error) {
	switch st {
	case C.WK_STATUS_OK:
		return takeRef(h), true, nil
	case C.WK_STATUS_NOT_FOUND:
		return TagRef{}, false, nil
	}
	return TagRef{}, false, statusErr(st)
}

// Current returns a copy of the channel's current body.
func (c *Cache) Current(channelKey string) (DeliveryTag, bool, error) {
	if !c.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	var h *C.wk_tag_view
	return tagResult(C.wkgo_cache_current(c.p, sp(channelKey), sn(channelKey), &h), h)
}

// CurrentRef is upstream's CurrentRef: a copy of the channel's reference.
func (c *Cache) CurrentRef(channelKey string) (TagRef, bool, error) {
	if !c.enter() {
		return TagRef{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	if ref, ok := c.hotCurrentRef(channelKey); ok {
		return ref, true, nil
	}
	var h *C.wk_tag_view
	return refResult(C.wkgo_cache_current(c.p, sp(channelKey), sn(channelKey), &h), h)
}

// IsSourceStale is upstream's IsSourceStale: true when the channel's tag
// records source.ChannelKey with a lower source version than source's;
// false without a tag or a source.
func (c *Cache) IsSourceStale(channelKey string, source SourceVersion) (bool, error) {
	if !c.enter() {
		return false, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	var stale C.bool
	st := C.wkgo_cache_is_source_stale(c.p, sp(channelKey), sn(channelKey), sp(source.ChannelKey),
		sn(source.ChannelKey), C.uint64_t(source.SubscriberMutationVersion), &stale)
	return bool(stale), statusErr(st)
}

// Channel returns a handle on channelKey's entry (made if the channel has
// none yet): look-ups and stores that skip the channel map.
func (c *Cache) Channel(channelKey string) (*Channel, error) {
	if !c.enter() {
		return nil, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	var p *C.wk_tag_channel
	if st := C.wkgo_cache_channel(c.p, sp(channelKey), sn(channelKey), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	h := &Channel{p: p, cache: c, key: channelKey}
	runtime.SetFinalizer(h, func(h *Channel) { C.wk_tag_channel_free(h.p) })
	return h, nil
}

// CleanupExpired reclaims the cold bodies and dangling references of up to
// limit channels (at most CleanupLimitMax) at now: one page of a pass that
// the next call continues. Meant for a host timer; with a TTL ≤ 0 it does
// nothing. ErrInvalidArgument for a negative limit.
func (c *Cache) CleanupExpired(now time.Time, limit int) (CleanupPage, error) {
	if !c.enter() {
		return CleanupPage{}, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	n, run, err := cleanupLimit(limit)
	if !run {
		return CleanupPage{}, err
	}
	var page C.wk_tag_cleanup_page
	if st := C.wk_tag_cache_cleanup(c.p, C.int64_t(unixNanos(now)), C.uint32_t(n), &page); st != C.WK_STATUS_OK {
		return CleanupPage{}, statusErr(st)
	}
	c.hotSweep(int(n))
	return pageOf(&page), nil
}

func pageOf(p *C.wk_tag_cleanup_page) CleanupPage {
	return CleanupPage{Visited: int(p.visited), Reclaimed: int(p.reclaimed), Unlinked: int(p.unlinked),
		Wrapped: bool(p.wrapped)}
}

func countsOf(c *C.wk_tag_counts) Counts {
	out := Counts{Stored: uint64(c.stored), Stale: uint64(c.stale), Tags: uint64(c.tags), UIDs: uint64(c.uids),
		ReclaimedBodies: uint64(c.reclaimed_bodies), ReclaimedRefs: uint64(c.reclaimed_refs)}
	for i := range out.Lookups {
		out.Lookups[i] = uint64(c.lookups[i])
	}
	return out
}

func (c *Cache) counts() (C.wk_tag_counts, error) {
	var out C.wk_tag_counts
	st := C.wk_tag_cache_counts(c.p, &out, C.sizeof_wk_tag_counts)
	return out, statusErr(st)
}

// Len returns how many channels have an entry (a moment's view).
func (c *Cache) Len() (int, error) {
	if !c.enter() {
		return 0, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	n, err := c.counts()
	return int(n.entries), err
}

// Counts returns the cache's counters.
func (c *Cache) Counts() (Counts, error) {
	if !c.enter() {
		return Counts{}, ErrHandleClosed
	}
	defer runtime.KeepAlive(c)
	n, err := c.counts()
	return countsOf(&n), err
}

// Close stops the cache: every call after it returns ErrHandleClosed, and
// so does a second Close. Views taken before stay valid until released. The
// library's reference is dropped once the Cache is unreachable (see the
// package docs: look-ups take no in-flight count).
func (c *Cache) Close() error {
	if c == nil || c.p == nil || !c.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// Channel is a handle on one channel's entry of a Cache: its look-ups and
// stores skip the channel map. Safe for concurrent use.
type Channel struct {
	p      *C.wk_tag_channel
	cache  *Cache
	key    string
	closed atomic.Bool
}

func (h *Channel) enter() bool {
	return h != nil && h.p != nil && !h.closed.Load() && h.cache.enter()
}

// Key returns the channel key ("" for a nil handle).
func (h *Channel) Key() string {
	if h == nil {
		return ""
	}
	return h.key
}

// Lookup is Cache.Lookup on this channel (req.ChannelKey is ignored).
func (h *Channel) Lookup(req TagRef) (*View, LookupReason, error) {
	if !h.enter() {
		return nil, "", ErrHandleClosed
	}
	// Inline through the cache's held state of this channel: the same answer
	// as the cell's own look-up (a retired cell answers through the index).
	s, reason, err := h.cache.hotFind(h.key, &req, false)
	runtime.KeepAlive(h)
	if s == nil {
		return nil, reason, err
	}
	return hotView(s), reason, nil
}

// Check is Lookup without the view.
func (h *Channel) Check(req TagRef) (LookupReason, error) {
	if !h.enter() {
		return "", ErrHandleClosed
	}
	_, reason, err := h.cache.hotFind(h.key, &req, false)
	runtime.KeepAlive(h)
	return reason, err
}

// Store is Cache.Store for this channel (tag.ChannelKey is checked but not
// used).
func (h *Channel) Store(tag DeliveryTag) (DeliveryTag, bool, error) {
	if !h.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(h)
	return storeIn(h.cache, nil, h.p, &tag)
}

// Current returns a copy of the channel's current body.
func (h *Channel) Current() (DeliveryTag, bool, error) {
	if !h.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(h)
	var v *C.wk_tag_view
	return tagResult(C.wk_tag_channel_current(h.p, &v), v)
}

// Close releases the handle; a second Close returns ErrHandleClosed.
func (h *Channel) Close() error {
	if h == nil || h.p == nil || !h.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// Leader is the channel leader's side (see the package docs). Its methods
// are safe for concurrent use.
type Leader struct {
	p      *C.wk_tag_leader // set at construction, never written again
	local  uint64
	clock  *clockSync
	closed atomic.Bool
}

// NewLeader creates an empty leader side: ErrInvalidConfig for a
// LocalNodeID of 0 or a KeyPrefix that is not UTF-8 (or longer than
// KeyMax).
func NewLeader(opts LeaderOptions) (*Leader, error) {
	clock, kind, start := newClockSync(opts.Now)
	var p *C.wk_tag_leader
	st := C.wkgo_leader_new(C.uint64_t(opts.LocalNodeID), C.uint64_t(ttlNanos(opts.TTL)), kind, start,
		sp(opts.KeyPrefix), sn(opts.KeyPrefix), &p)
	if st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	l := &Leader{p: p, local: opts.LocalNodeID, clock: clock}
	runtime.SetFinalizer(l, func(l *Leader) { C.wk_tag_leader_free(l.p) })
	return l, nil
}

func (l *Leader) enter() bool {
	if l == nil || l.p == nil || l.closed.Load() {
		return false
	}
	wkabi.MaybeGC()
	return true
}

func (l *Leader) sync() {
	l.clock.sync(func(ns uint64) { C.wk_tag_leader_advance_clock(l.p, C.uint64_t(ns)) })
}

// LocalNodeID returns this node (0 for a nil leader).
func (l *Leader) LocalNodeID() uint64 {
	if l == nil {
		return 0
	}
	return l.local
}

// BuildLeaderTag is upstream's BuildLeaderTag (see the package docs); it
// returns a copy of the tag built.
func (l *Leader) BuildLeaderTag(req BuildRequest) (DeliveryTag, error) {
	return l.buildWith(&req, false)
}

// BuildEphemeralTag is upstream's BuildEphemeralTag: a body under a fresh
// key, version 1, reachable only by key (LookupTag); the channel's current
// tag is not touched.
func (l *Leader) BuildEphemeralTag(req BuildRequest) (DeliveryTag, error) {
	return l.buildWith(&req, true)
}

func (l *Leader) buildWith(r *BuildRequest, ephemeral bool) (DeliveryTag, error) {
	if !l.enter() {
		return DeliveryTag{}, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	if err := checkBuildIn(r); err != nil {
		return DeliveryTag{}, err
	}
	l.sync()
	b, in := buildIn(r)
	var h *C.wk_tag_view
	var st C.wk_status
	if ephemeral {
		st = C.wk_tag_leader_build_ephemeral(l.p, in, &h)
	} else {
		st = C.wk_tag_leader_build(l.p, in, &h)
	}
	b.free()
	if st != C.WK_STATUS_OK {
		return DeliveryTag{}, statusErr(st)
	}
	return takeTag(h), nil
}

// Lookup is the fence of req against the channel's current tag (the
// leader's reuse check), as Cache.Lookup; the View holds every partition.
func (l *Leader) Lookup(req TagRef) (*View, LookupReason, error) {
	if !l.enter() {
		return nil, "", ErrHandleClosed
	}
	v, reason, err := lookupView(onLeader, unsafe.Pointer(l.p), &req)
	runtime.KeepAlive(l)
	return v, reason, err
}

// Check is Lookup without the view.
func (l *Leader) Check(req TagRef) (LookupReason, error) {
	if !l.enter() {
		return "", ErrHandleClosed
	}
	reason, err := lookupCall(onLeader, unsafe.Pointer(l.p), nil, &req)
	runtime.KeepAlive(l)
	return reason, err
}

// LookupTag is upstream's LookupTag: a copy of the body under tagKey
// (current, ephemeral, or an older incarnation not yet reclaimed), for the
// authority fetch; its access time is refreshed.
func (l *Leader) LookupTag(tagKey string) (DeliveryTag, bool, error) {
	if !l.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	l.sync()
	var h *C.wk_tag_view
	return tagResult(C.wkgo_leader_lookup_tag(l.p, sp(tagKey), sn(tagKey), &h), h)
}

// Current returns a copy of the channel's current tag.
func (l *Leader) Current(channelKey string) (DeliveryTag, bool, error) {
	if !l.enter() {
		return DeliveryTag{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	var h *C.wk_tag_view
	return tagResult(C.wkgo_leader_current(l.p, sp(channelKey), sn(channelKey), &h), h)
}

// CurrentRef is upstream's CurrentRef.
func (l *Leader) CurrentRef(channelKey string) (TagRef, bool, error) {
	if !l.enter() {
		return TagRef{}, false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	var h *C.wk_tag_view
	return refResult(C.wkgo_leader_current(l.p, sp(channelKey), sn(channelKey), &h), h)
}

// IsSourceStale is upstream's IsSourceStale (as Cache.IsSourceStale).
func (l *Leader) IsSourceStale(channelKey string, source SourceVersion) (bool, error) {
	if !l.enter() {
		return false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	var stale C.bool
	st := C.wkgo_leader_is_source_stale(l.p, sp(channelKey), sn(channelKey), sp(source.ChannelKey),
		sn(source.ChannelKey), C.uint64_t(source.SubscriberMutationVersion), &stale)
	return bool(stale), statusErr(st)
}

// Usable returns a view of the channel's current tag if a message may use
// it: ErrNotFound without a tag, ErrDirty while a membership change is
// pending or after one failed (until a build), ErrLagging when its
// subscriber mutation version is below authoritativeVersion (the store's).
// Any of the three: rebuild. Release the view when done.
func (l *Leader) Usable(channelKey string, authoritativeVersion uint64) (*View, error) {
	if !l.enter() {
		return nil, ErrHandleClosed
	}
	v := viewPool.Get().(*View)
	stale := C.uintptr_t(uintptr(unsafe.Pointer(v.stale)))
	v.stale = nil
	st := C.wkgo_leader_usable(l.p, stale, (*C.uint64_t)(unsafe.Pointer(&v.out)), sp(channelKey), sn(channelKey),
		C.uint64_t(authoritativeVersion))
	runtime.KeepAlive(l)
	if st != C.WK_STATUS_OK {
		v.Release()
		return nil, statusErr(st)
	}
	v.count, v.nparts = -1, -1
	return v, nil
}

// IsDirty reports whether a membership change of the channel is pending, or
// one failed since its last build.
func (l *Leader) IsDirty(channelKey string) (bool, error) {
	if !l.enter() {
		return false, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	var dirty C.bool
	st := C.wkgo_leader_is_dirty(l.p, sp(channelKey), sn(channelKey), &dirty)
	return bool(dirty), statusErr(st)
}

// BeginMutation marks the channel dirty, before the host writes the
// membership change to its store; the Mutation collects the change and
// Commit applies it with the store's version (see Mutation).
func (l *Leader) BeginMutation(channelKey string) (*Mutation, error) {
	if !l.enter() {
		return nil, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	var p *C.wk_tag_mutation
	if st := C.wkgo_leader_begin_mutation(l.p, sp(channelKey), sn(channelKey), &p); st != C.WK_STATUS_OK {
		return nil, statusErr(st)
	}
	m := &Mutation{p: p, l: l}
	// A Mutation dropped open is a failed store write.
	runtime.SetFinalizer(m, func(m *Mutation) { C.wk_tag_mutation_free(m.p) })
	return m, nil
}

// CleanupExpired reclaims up to limit bodies (at most CleanupLimitMax) idle
// past the TTL at now, clearing a channel's current tag when it was the
// body reclaimed. ErrInvalidArgument for a negative limit.
func (l *Leader) CleanupExpired(now time.Time, limit int) (CleanupPage, error) {
	if !l.enter() {
		return CleanupPage{}, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	n, run, err := cleanupLimit(limit)
	if !run {
		return CleanupPage{}, err
	}
	var page C.wk_tag_cleanup_page
	if st := C.wk_tag_leader_cleanup(l.p, C.int64_t(unixNanos(now)), C.uint32_t(n), &page); st != C.WK_STATUS_OK {
		return CleanupPage{}, statusErr(st)
	}
	return pageOf(&page), nil
}

func (l *Leader) counts() (C.wk_tag_counts, error) {
	var out C.wk_tag_counts
	st := C.wk_tag_leader_counts(l.p, &out, C.sizeof_wk_tag_counts)
	return out, statusErr(st)
}

// Bodies returns how many bodies are held by key (a moment's view).
func (l *Leader) Bodies() (int, error) {
	if !l.enter() {
		return 0, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	n, err := l.counts()
	return int(n.entries), err
}

// Counts returns the leader's counters.
func (l *Leader) Counts() (Counts, error) {
	if !l.enter() {
		return Counts{}, ErrHandleClosed
	}
	defer runtime.KeepAlive(l)
	n, err := l.counts()
	return countsOf(&n), err
}

// Close stops the leader side: every call after it returns ErrHandleClosed,
// and so does a second Close. The library's reference is dropped once the
// Leader is unreachable (as Cache.Close).
func (l *Leader) Close() error {
	if l == nil || l.p == nil || !l.closed.CompareAndSwap(false, true) {
		return ErrHandleClosed
	}
	return nil
}

// Mutation is one logical membership change of a channel, open from before
// the host writes its store until Commit with the store's version; chunks
// accumulate (Reset, Add, Remove). Abandon (a failed or partial store
// write) leaves the channel dirty, so its tag is rebuilt before its next
// use; so does a Mutation dropped without either. Not for concurrent use.
type Mutation struct {
	p *C.wk_tag_mutation
	l *Leader
}

func (m *Mutation) open() bool {
	if m == nil || m.p == nil {
		return false
	}
	wkabi.MaybeGC()
	return true
}

// Reset clears every partition (reset / remove-all), before this
// mutation's adds.
func (m *Mutation) Reset() error {
	if !m.open() {
		return ErrHandleClosed
	}
	st := C.wk_tag_mutation_reset(m.p)
	runtime.KeepAlive(m)
	return statusErr(st)
}

// Add adds uids to nodeID's partition (the node that owns each UID's
// slot).
func (m *Mutation) Add(nodeID uint64, uids ...string) error {
	return m.change(true, nodeID, uids)
}

// Remove removes uids from whichever partition holds them.
func (m *Mutation) Remove(uids ...string) error {
	return m.change(false, 0, uids)
}

func (m *Mutation) change(add bool, nodeID uint64, uids []string) error {
	if !m.open() {
		return ErrHandleClosed
	}
	if err := checkUIDs(uids); err != nil {
		return err
	}
	b := newCBlock(blockSize(0, nil, 0, []NodePartition{{UIDs: uids}}))
	p, n := b.uids(uids)
	var st C.wk_status
	if add {
		st = C.wk_tag_mutation_add(m.p, C.uint64_t(nodeID), p, n)
	} else {
		st = C.wk_tag_mutation_remove(m.p, p, n)
	}
	b.free()
	runtime.KeepAlive(m)
	return statusErr(st)
}

// Commit applies the mutation with the version the store returned: one tag
// version bump however many chunks it had, the key unchanged; it clears
// this mutation's dirty mark. The tag is a copy of the updated (or, for
// MutationAlreadyCurrent, the current) tag. Commit ends the mutation: a
// second call returns ErrHandleClosed. On ErrTooLarge the mutation is
// ended and the channel left dirty (rebuild).
func (m *Mutation) Commit(storeVersion uint64) (MutationResult, DeliveryTag, error) {
	if !m.open() {
		return 0, DeliveryTag{}, ErrHandleClosed
	}
	m.l.sync()
	var outcome C.uint8_t
	var h *C.wk_tag_view
	st := C.wk_tag_mutation_commit(m.p, C.uint64_t(storeVersion), &outcome, &h)
	// The call consumed the handle (only a refused argument would not, and
	// every argument here is valid).
	m.p = nil
	runtime.SetFinalizer(m, nil)
	if st != C.WK_STATUS_OK {
		return 0, DeliveryTag{}, statusErr(st)
	}
	if h == nil {
		return MutationResult(outcome), DeliveryTag{}, nil
	}
	return MutationResult(outcome), takeTag(h), nil
}

// Abandon ends the mutation without applying it: the channel stays dirty
// until its next build.
func (m *Mutation) Abandon() error {
	if !m.open() {
		return ErrHandleClosed
	}
	C.wk_tag_mutation_free(m.p)
	m.p = nil
	runtime.SetFinalizer(m, nil)
	return nil
}
